"""Divergent branches reconverge, barriers hold a block, shuffles and atomics see their warp, on hand PTX."""

from __future__ import annotations

import numpy as np
import pytest
from ptx_factories import floats, kernel, run

from gpu_worker.ptx.abi import arguments
from gpu_worker.ptx.errors import LimitExceeded, Unsupported
from gpu_worker.ptx.executor import Executor, Launch, Limits
from gpu_worker.ptx.parser import parse

OUT = ".param .u64 k_param_0"
LOAD_OUT = "\tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
THREAD_SLOT = "\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"


def test_each_side_of_a_divergent_branch_runs_and_the_threads_meet_after_it():
    body = (
        LOAD_OUT
        + THREAD_SLOT
        + "\tand.b32 %r2, %r1, 1;\n\tsetp.eq.s32 %p1, %r2, 0;\n\t@%p1 bra EVEN;\n"
        + "\tmov.u32 %r3, 100;\n\tbra.uni JOIN;\nEVEN:\n\tmov.u32 %r3, 200;\nJOIN:\n"
        + "\tadd.s32 %r4, %r3, %r1;\n\tst.global.u32 [%rd3], %r4;\n\tret;"
    )
    out = np.zeros(64, dtype=np.uint32)
    run(kernel("k", OUT, body), ["out"], [out], (1, 1, 1), (64, 1, 1))
    t = np.arange(64)
    assert out.tolist() == np.where(t % 2 == 0, 200 + t, 100 + t).tolist()


def test_a_loop_whose_trip_count_differs_per_thread_runs_each_threads_count():
    body = (
        LOAD_OUT
        + THREAD_SLOT
        + "\tmov.u32 %r2, 0;\n\tmov.u32 %r3, 0;\nLOOP:\n\tsetp.ge.u32 %p1, %r2, %r1;\n\t@%p1 bra DONE;\n"
        + "\tadd.s32 %r3, %r3, %r2;\n\tadd.s32 %r2, %r2, 1;\n\tbra.uni LOOP;\n"
        + "DONE:\n\tst.global.u32 [%rd3], %r3;\n\tret;"
    )
    out = np.zeros(40, dtype=np.uint32)
    run(kernel("k", OUT, body), ["out"], [out], (1, 1, 1), (40, 1, 1))
    assert out.tolist() == [t * (t - 1) // 2 for t in range(40)]


def test_a_barrier_makes_every_threads_shared_store_visible_to_the_block():
    body = (
        "\t.shared .align 4 .b8 tile[1024];\n"
        + LOAD_OUT
        + THREAD_SLOT
        + "\tshl.b32 %r2, %r1, 2;\n\tmov.u32 %r3, tile;\n\tadd.s32 %r4, %r3, %r2;\n\tst.shared.u32 [%r4], %r1;\n"
        + "\tbar.sync 0;\n\tsub.s32 %r5, 1020, %r2;\n\tadd.s32 %r6, %r3, %r5;\n\tld.shared.u32 %r7, [%r6];\n"
        + "\tst.global.u32 [%rd3], %r7;\n\tret;"
    )
    out = np.zeros(256, dtype=np.uint32)
    run(kernel("k", OUT, body), ["out"], [out], (1, 1, 1), (256, 1, 1))
    assert out.tolist() == list(range(255, -1, -1))


def test_each_block_has_its_own_shared_memory():
    body = (
        "\t.shared .align 4 .b8 cell[4];\n"
        + LOAD_OUT
        + "\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %tid.x;\n\tsetp.ne.s32 %p1, %r2, 0;\n\t@%p1 bra WAIT;\n"
        + "\tst.shared.u32 [cell], %r1;\nWAIT:\n\tbar.sync 0;\n\tld.shared.u32 %r3, [cell];\n"
        + "\tmov.u32 %r4, %ntid.x;\n\tmad.lo.s32 %r5, %r1, %r4, %r2;\n\tmul.wide.u32 %rd2, %r5, 4;\n"
        + "\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r3;\n\tret;"
    )
    out = np.zeros(5 * 64, dtype=np.uint32)
    run(kernel("k", OUT, body), ["out"], [out], (5, 1, 1), (64, 1, 1))
    assert out.tolist() == np.repeat(np.arange(5), 64).tolist()


def test_shfl_down_sums_a_warp_and_its_predicate_says_which_lanes_had_a_source():
    body = (
        LOAD_OUT
        + THREAD_SLOT
        + "\tmov.u32 %r2, %r1;\n"
        + "".join(
            f"\tshfl.sync.down.b32 %r3|%p1, %r2, {o}, 31, -1;\n\tadd.s32 %r2, %r2, %r3;\n" for o in (16, 8, 4, 2, 1)
        )
        + "\tshfl.sync.down.b32 %r5|%p2, %r1, 1, 31, -1;\n\tselp.u32 %r6, 1, 0, %p2;\n"
        + "\tshl.b32 %r6, %r6, 16;\n\tadd.s32 %r7, %r2, %r6;\n\tst.global.u32 [%rd3], %r7;\n\tret;"
    )
    out = np.zeros(64, dtype=np.uint32)
    run(kernel("k", OUT, body), ["out"], [out], (1, 1, 1), (64, 1, 1))
    assert out[0] == sum(range(32)) + (1 << 16) and out[32] == sum(range(32, 64)) + (1 << 16)
    assert out[31] >> 16 == 0 and out[63] >> 16 == 0  # lane 31 has no lane 32 to read from


def test_an_atomic_add_from_every_thread_counts_them_all_and_each_sees_a_distinct_old_value():
    body = (
        ".reg .b32 %q<4>;\n"
        + LOAD_OUT
        + "\tld.param.u64 %rd4, [k_param_1];\n\tcvta.to.global.u64 %rd4, %rd4;\n"
        + THREAD_SLOT.replace("%tid.x", "%tid.x")
        + "\tatom.global.add.u32 %r2, [%rd4], 1;\n\tst.global.u32 [%rd3], %r2;\n\tret;"
    )
    out, counter = np.zeros(128, dtype=np.uint32), np.zeros(1, dtype=np.uint32)
    run(kernel("k", OUT + ",\n.param .u64 k_param_1", body), ["out", "counter"], [out, counter], (1, 1, 1), (128, 1, 1))
    assert counter[0] == 128 and sorted(out.tolist()) == list(range(128))


def test_float_arithmetic_is_ieee_single_precision():
    body = (
        "\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u64 %rd5, [k_param_1];\n"
        + THREAD_SLOT
        + "\tadd.s64 %rd6, %rd5, %rd2;\n\tld.global.f32 %f1, [%rd3];\n\tmul.f32 %f2, %f1, 0f40400000;\n"
        + "\tfma.rn.f32 %f3, %f1, %f1, %f2;\n\tdiv.rn.f32 %f4, %f3, 0f40E00000;\n\tst.global.f32 [%rd6], %f4;\n\tret;"
    )
    a, out = floats(32), np.zeros(32, dtype=np.float32)
    run(kernel("k", OUT + ",\n.param .u64 k_param_1", body), ["a", "out"], [a, out], (1, 1, 1), (32, 1, 1))
    fused = (a.astype(np.float64) * a + (a * np.float32(3))).astype(np.float32)  # one rounding: fma
    assert np.array_equal(out, fused / np.float32(7))


def test_an_instruction_the_executor_does_not_run_is_refused_by_name_and_line():
    body = LOAD_OUT + "\t.loc\t1 12 3\n\tsad.u32 %r1, %r1, %r1, %r1;\n\tret;"
    with pytest.raises(Unsupported) as caught:
        run(kernel("k", OUT, body), ["out"], [np.zeros(1, np.uint32)], (1, 1, 1), (1, 1, 1))
    assert caught.value.line == 12 and "sad.u32" in caught.value.message


def test_a_call_of_a_function_is_refused_naming_it():
    body = "\t.loc\t1 5 3\n\tcall.uni (retval0), helper, (param0);\n\tret;"
    with pytest.raises(Unsupported, match="`call` of helper") as caught:
        run(kernel("k", OUT, body), ["out"], [np.zeros(1, np.uint32)], (1, 1, 1), (1, 1, 1))
    assert caught.value.line == 5


def test_printf_formats_each_threads_arguments_from_its_local_buffer():
    printf_module = (
        ".extern .func (.param .b32 func_retval0) vprintf\n(\n.param .b64 vprintf_param_0,\n"
        ".param .b64 vprintf_param_1\n)\n;\n"
        ".global .align 1 .b8 $str[22] = {116, 61, 37, 100, 32, 120, 61, 37, 46, 50, 102, 32, 37, 115, 32, 37, 37, "
        "10};\n.global .align 1 .b8 $str$1[3] = {111, 107};\n"
    )
    body = (
        "\t.local .align 8 .b8 __local_depot0[24];\n\tmov.u64 %SPL, __local_depot0;\n\tcvta.local.u64 %SP, %SPL;\n"
        "\tmov.u32 %r1, %tid.x;\n\tst.local.u32 [%SPL], %r1;\n\tcvt.rn.f64.u32 %fd1, %r1;\n"
        "\tst.local.f64 [%SPL+8], %fd1;\n\tmov.u64 %rd5, $str$1;\n\tcvta.global.u64 %rd5, %rd5;\n"
        "\tst.local.u64 [%SPL+16], %rd5;\n\tmov.u64 %rd6, $str;\n\tcvta.global.u64 %rd6, %rd6;\n"
        "\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0+0], %rd6;\n\t.param .b64 param1;\n"
        "\tst.param.b64 [param1+0], %SP;\n\t.param .b32 retval0;\n\tcall.uni (retval0),\n\tvprintf,\n"
        "\t(\n\tparam0,\n\tparam1\n\t);\n\tld.param.b32 %r2, [retval0+0];\n\t}\n\tret;"
    )
    source = kernel("k", OUT, body, ".reg .b64 %SP;\n.reg .b64 %SPL;\n.reg .b32 %r<4>;\n.reg .f64 %fd<2>;\n"
                    ".reg .b64 %rd<8>;\n")  # fmt: skip
    module = parse(source.replace(".visible .entry", printf_module + ".visible .entry", 1))
    (entry,) = module.kernels.values()
    params, memory = arguments(entry, "cuda", ["out"], [np.zeros(1, np.uint32)])
    executor = Executor(module, entry, params, memory)
    executor.run(Launch((1, 1, 1), (3, 1, 1)))
    assert executor.printed.text() == "t=0 x=0.00 ok %\nt=1 x=1.00 ok %\nt=2 x=2.00 ok %\n"


def test_an_endless_loop_stops_at_the_instruction_budget():
    body = "\t.loc\t1 3 1\nL:\n\tbra.uni L;\n\tret;"
    with pytest.raises(LimitExceeded) as caught:
        run(kernel("k", OUT, body), ["out"], [np.zeros(1, np.uint32)], (1, 1, 1), (32, 1, 1),
            limits=Limits(max_thread_instructions=100_000))  # fmt: skip
    assert caught.value.line == 3


def test_carry_arithmetic_adds_and_multiplies_across_words():
    body = (
        LOAD_OUT
        + "\tmov.u32 %r1, -1;\n\tmov.u32 %r2, 1;\n\tadd.cc.u32 %r3, %r1, %r2;\n\taddc.u32 %r4, 0, 0;\n"
        + "\tmov.u32 %r5, -559038737;\n\tmad.lo.cc.u32 %r6, %r5, %r5, %r1;\n\tmadc.hi.u32 %r7, %r5, %r5, 0;\n"
        + "\tst.global.u32 [%rd1], %r3;\n\tst.global.u32 [%rd1+4], %r4;\n\tst.global.u32 [%rd1+8], %r6;\n"
        + "\tst.global.u32 [%rd1+12], %r7;\n\tret;"
    )
    out = np.zeros(4, dtype=np.uint32)
    run(kernel("k", OUT, body), ["out"], [out], (1, 1, 1), (1, 1, 1))
    x = 0xDEADBEEF
    wide = x * x + 0xFFFFFFFF
    assert out.tolist() == [0, 1, wide & 0xFFFFFFFF, ((x * x) >> 32) + (wide >> 32 > (x * x) >> 32)]


def test_bit_field_extract_and_insert():
    body = (
        LOAD_OUT
        + "\tmov.u32 %r1, 0xF0F0ABCD;\n\tbfe.u32 %r2, %r1, 8, 8;\n\tbfe.s32 %r3, %r1, 28, 4;\n"
        + "\tbfi.b32 %r4, 0x5, %r1, 4, 4;\n\tst.global.u32 [%rd1], %r2;\n\tst.global.u32 [%rd1+4], %r3;\n"
        + "\tst.global.u32 [%rd1+8], %r4;\n\tret;"
    )
    out = np.zeros(3, dtype=np.uint32)
    run(kernel("k", OUT, body), ["out"], [out], (1, 1, 1), (1, 1, 1))
    assert out.tolist() == [0xAB, 0xFFFFFFFF, 0xF0F0AB5D]
