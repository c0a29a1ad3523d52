"""The parser reads entries, parameters, registers, shared arrays, labels, guards and `.loc` lines as written."""

from __future__ import annotations

import pytest
from ptx_factories import HEADER, kernel

from gpu_worker.ptx.errors import PtxSyntaxError, Unsupported
from gpu_worker.ptx.parser import parse
from gpu_worker.ptx.program import Addr, Imm, Pair, Reg, Special, Sym, Vec

BODY = """
\t.loc\t1 4 0
\t.shared .align 4 .b8 _ZZ1kE4tile[4224];
\tld.param.u64 \t%rd1, [k_param_0];
\t.loc\t1 7 5
\tmov.u32 \t%r1, %tid.x;
\tsetp.ge.s32 \t%p1, %r1, 132;
\t@%p1 bra \t$L__BB0_2;
\tst.shared.f32 \t[_ZZ1kE4tile+128], %f1;
\tshfl.sync.down.b32 \t%r2|%p2, %r1, 1, 31, -1;
\tmov.b64 \t{%r3, %r4}, %rd1;
\tmov.f32 \t%f2, 0f3F800000;
\tld.global.nc.v4.f32 \t{%f4, %f5, %f6, %f7}, [%rd1+-16];
$L__BB0_2:
\t.loc\t1 9 1
\tret;
"""


def test_it_reads_an_entry_with_its_parameters_variables_and_instructions():
    module = parse(kernel("k", ".param .u64 k_param_0,\n.param .u32 k_param_1", BODY))
    k = module.kernels["k"]
    assert [(p.name, p.type, p.size) for p in k.params] == [("k_param_0", "u64", 8), ("k_param_1", "u32", 4)]
    assert [(v.name, v.space, v.size) for v in k.variables] == [("_ZZ1kE4tile", "shared", 4224)]
    assert k.registers["%r63"] == "b32" and k.registers["%p0"] == "pred"
    assert k.labels == {"$L__BB0_2": 9}
    assert [i.opcode for i in k.instructions][:3] == ["ld.param.u64", "mov.u32", "setp.ge.s32"]
    assert module.files == {1: "/tmp/submission.cu"}


def test_operands_keep_their_kinds():
    k = parse(kernel("k", ".param .u64 k_param_0", BODY)).kernels["k"]
    ld, mov, setp, bra, st, shfl, pack, fimm, vec, ret = k.instructions
    assert ld.operands == (Reg("%rd1"), Addr(Sym("k_param_0"), 0))
    assert mov.operands[1] == Special("%tid.x")
    assert setp.operands[2] == Imm(132)  # decimal, not octal
    assert (bra.guard, bra.negated, bra.operands) == ("%p1", False, (Sym("$L__BB0_2"),))
    assert st.operands[0] == Addr(Sym("_ZZ1kE4tile"), 128)
    assert shfl.operands[0] == Pair(Reg("%r2"), Reg("%p2")) and shfl.operands[4] == Imm(-1)
    assert pack.operands[0] == Vec((Reg("%r3"), Reg("%r4")))
    assert fimm.operands[1] == Imm(0x3F800000, 32)
    assert vec.operands[1] == Addr(Reg("%rd1"), -16)
    assert ret.opcode == "ret"


def test_each_instruction_carries_the_line_of_the_loc_before_it():
    k = parse(kernel("k", ".param .u64 k_param_0", BODY)).kernels["k"]
    assert [i.line for i in k.instructions] == [4] + [7] * 8 + [9]


def test_tritons_inline_asm_loads_with_spaces_and_braces_are_read():
    body = "\tmov.u32 %r1, 0x0;\n\t@%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];\n\tret;"
    ld = parse(kernel("k", ".param .u64 .ptr .global .align 1 k_param_0", body)).kernels["k"].instructions[1]
    assert ld.operands == (Vec((Reg("%r1"),)), Addr(Reg("%rd1"), 0)) and ld.guard == "%p1"


def test_an_inline_asm_block_is_on_its_calls_line_not_one_line_further_per_asm_line():
    # Triton 3.9's unmasked four-word load called on line 8, as LLVM prints it: a `.loc` per asm line, 8 to 12.
    block = "".join(f"\t.loc\t1 {8 + i} 9   // submission.py:{8 + i}:9\n\tmov.u32 %r{i + 1}, 0x0;\n" for i in range(4))
    body = (
        f"\t.loc\t1 8 9\n\t// begin inline asm\n{block}\t.loc\t1 12 9\n"
        "\tld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];\n\n\t// end inline asm\n"
        f"\t// begin inline asm\n{block}\t.loc\t1 12 9\n\tld.global.v4.b32 {{ %r5, %r6, %r7, %r8 }}, [ %rd2 + 0 ];\n"
        "\t// end inline asm\n\t.loc\t1 9 35\n\tret;"
    )
    k = parse(kernel("k", ".param .u64 k_param_0", body)).kernels["k"]
    assert [i.line for i in k.instructions] == [8] * 10 + [9]


def test_dwarf_sections_and_module_variables_are_taken_apart():
    text = (
        HEADER
        + ".visible .shared .align 4 .b8 _cudapy_smem_1[1024];\n.common .global .align 8 .u64 _ZN08NumbaEnv1k;\n"
        + kernel("k", "", "\tret;").removeprefix(HEADER)
        + "\t.section\t.debug_abbrev\n\t{\n.b8 1\n.b8 17\n\t}\n"
    )
    module = parse(text)
    assert [(v.name, v.space, v.size) for v in module.variables] == [
        ("_cudapy_smem_1", "shared", 1024),
        ("_ZN08NumbaEnv1k", "global", 8),
    ]


def test_an_unknown_directive_is_refused_with_its_line():
    with pytest.raises(Unsupported) as caught:
        parse(kernel("k", "", "\t.loc\t1 3 1\n\t.mystery 1;\n\tret;"))
    assert caught.value.line == 3 and ".mystery" in caught.value.message


def test_unreadable_text_is_a_syntax_error_not_a_crash():
    with pytest.raises(PtxSyntaxError):
        parse(kernel("k", "", "\tadd.s32 %r1, %r2, [[;\n"))
    with pytest.raises(PtxSyntaxError):
        parse(HEADER + ".visible .entry k()\n{\n\tret;\n")


def test_a_text_over_the_limit_is_refused_before_it_is_read():
    with pytest.raises(PtxSyntaxError, match="characters"):
        parse(" " * (9 << 20))
