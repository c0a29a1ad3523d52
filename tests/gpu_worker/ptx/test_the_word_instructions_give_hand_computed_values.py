"""`brev`, `clz`, `bfind` and `prmt` (every mode) give the values worked out by hand, on hand-written PTX, and
nvcc's own `__brev`, `__clz`, `__ffs` and `__byte_perm` run on the executor."""

from __future__ import annotations

import numpy as np
import pytest
from lab_cases import cuda_ptx
from ptx_factories import kernel, run

from gpu_worker.ptx.abi import arguments
from gpu_worker.ptx.executor import Executor, Launch
from gpu_worker.ptx.parser import parse

PARAMS = ".param .u64 k_param_0,\n.param .u64 k_param_1,\n.param .u64 k_param_2,\n.param .u64 k_param_3"
LOADS = "\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd9, %r1, {size};\n" + "".join(
    f"\tld.param.u64 %rd{k}, [k_param_{k}];\n\tadd.s64 %rd{k}, %rd{k}, %rd9;\n" for k in range(4)
)


def _each(opcode: str, a: list[int], b: list[int] | None = None, c: list[int] | None = None, wide: bool = False):
    """`opcode d, a[, b, c]` on one thread per value; the results (u32, or u64 for a 64-bit brev)."""
    kind, size, reg = ("u64", 8, "%rd") if wide else ("u32", 4, "%r")
    out_kind = "u64" if wide and opcode.startswith("brev") else "u32"
    sources = "a" if b is None else "a, b, c"
    body = LOADS.format(size=size)
    for k in (1, 2, 3):
        body += f"\tld.global.{kind} {reg}{10 + k}, [%rd{k}];\n"
    names = ", ".join(f"{reg}{10 + k}" for k, n in ((1, "a"), (2, "b"), (3, "c")) if n in sources)
    dest = "%rd20" if out_kind == "u64" else "%r20"
    body += f"\t{opcode} {dest}, {names};\n\tst.global.{out_kind} [%rd0], {dest};\n\tret;"
    dtype = np.uint64 if wide else np.uint32
    n = len(a)
    values = [np.array(v if v is not None else [0] * n, dtype=dtype) for v in (a, b, c)]
    out = np.zeros(n, dtype=dtype)  # a 32-bit result of a 64-bit source lands in its slot's low half
    run(kernel("k", PARAMS, body), ["out", "a", "b", "c"], [out, *values], (1, 1, 1), (n, 1, 1))
    return [int(v) for v in out]


def test_brev_reverses_the_bits_of_a_word():
    assert _each("brev.b32", [0x00000001, 0x12345678, 0xFFFF0000, 0]) == [0x80000000, 0x1E6A2C48, 0x0000FFFF, 0]
    assert _each("brev.b64", [1, 0x00000000FFFFFFFF], wide=True) == [1 << 63, 0xFFFFFFFF00000000]


def test_clz_counts_the_leading_zeros():
    assert _each("clz.b32", [0, 1, 0x80000000, 0x00010000, 0x7FFFFFFF]) == [32, 31, 0, 15, 1]
    assert _each("clz.b64", [0, 1, 1 << 40], wide=True) == [64, 63, 23]


def test_bfind_finds_the_highest_bit_that_is_not_the_sign():
    none = 0xFFFFFFFF
    assert _each("bfind.u32", [0, 1, 0x80000000, 0x00F00000]) == [none, 0, 31, 23]
    minus_one, minus_two = 0xFFFFFFFF, 0xFFFFFFFE
    assert _each("bfind.s32", [minus_one, minus_two, 0x40000000, 0, 0x80000000]) == [none, 0, 30, none, 30]
    assert _each("bfind.shiftamt.u32", [1, 0x80000000, 0]) == [31, 0, none]


A, B = 0x33221100, 0x77665544  # the eight bytes of {b, a} are 0x00 .. 0x77, byte k holding 0xkk


@pytest.mark.parametrize(
    "mode, selector, expected",
    [
        ("", 0x3210, 0x33221100),
        ("", 0x7654, 0x77665544),
        ("", 0x0123, 0x00112233),
        ("", 0x5410, 0x55441100),  # __byte_perm(a, b, 0x5410): the low half-words of both
        (".f4e", 1, 0x44332211),
        (".b4e", 0, 0x55667700),
        (".rc8", 2, 0x22222222),
        (".ecl", 1, 0x33221111),
        (".ecr", 2, 0x22221100),
        (".rc16", 1, 0x33223322),
    ],
)
def test_prmt_picks_each_byte_as_the_isa_s_table_says(mode: str, selector: int, expected: int):
    assert _each(f"prmt.b32{mode}", [A], [B], [selector]) == [expected]


def test_prmt_s_sign_bit_replicates_the_chosen_byte_s_top_bit():
    # selector nibbles 8 (byte 0, replicated sign) and 1 (byte 1 as it is): 0xF0 is negative, 0x01 is not
    assert _each("prmt.b32", [0x000001F0], [0], [0x9898]) == [0x00FF00FF]


def test_nvcc_s_bit_intrinsics_run_on_the_executor():
    source = r"""
    extern "C" __global__ void bits(unsigned* out, const unsigned* a) {
        int i = threadIdx.x;
        out[4 * i] = __brev(a[i]);
        out[4 * i + 1] = __clz(a[i]);
        out[4 * i + 2] = __ffs(a[i]);
        out[4 * i + 3] = __byte_perm(a[i], 0x77665544u, 0x5410);
    }
    """
    ptx = cuda_ptx(source)
    assert ptx is not None and "brev.b32" in ptx and "bfind" in ptx and "prmt.b32" in ptx
    module = parse(ptx)
    a = np.array([0x12345678, 1, 0x80000000, 0], dtype=np.uint32)
    out = np.zeros(16, dtype=np.uint32)
    params, memory = arguments(module.kernels["bits"], "cuda", ["out", "a"], [out, a])
    Executor(module, module.kernels["bits"], params, memory).run(Launch((1, 1, 1), (4, 1, 1)))
    assert out.reshape(4, 4).tolist() == [
        [0x1E6A2C48, 3, 4, 0x55445678],
        [0x80000000, 31, 1, 0x55440001],
        [0x00000001, 0, 32, 0x55440000],
        [0, 32, 0, 0x55440000],
    ]
