"""A block that reads another warp's shared-memory slot without a barrier is wrong on the executor, and warned on
that line; with the barrier it is right and nothing is warned. Reading a slot nobody wrote is warned too."""

from __future__ import annotations

import numpy as np
from lab_cases import cuda_ptx

from gpu_worker.ptx.abi import arguments
from gpu_worker.ptx.executor import Executor, Launch
from gpu_worker.ptx.parser import parse
from gpu_worker.ptx.report import MemoryTrace
from gpu_worker.science.memtrace_report import MemoryReport

REVERSE = """
extern "C" __global__ void reverse_blocks(const float* a, float* out, int n)
{
    __shared__ float tile[256];
    int t = threadIdx.x, base = blockIdx.x * 256;
    tile[t] = a[base + t];
    BARRIER
    out[base + t] = tile[255 - t];
}
"""


def reverse(source: str, n: int = 512) -> tuple[np.ndarray, np.ndarray, MemoryReport]:
    module = parse(cuda_ptx(source) or "")
    kernel = module.kernels["reverse_blocks"]
    a, out = np.arange(n, dtype=np.float32) + 1, np.zeros(n, dtype=np.float32)
    params, memory = arguments(kernel, "cuda", ["a", "out", "n"], [a, out, np.int32(n)])
    trace = MemoryTrace()
    stats = Executor(module, kernel, params, memory, trace=trace).run(Launch((n // 256, 1, 1), (256, 1, 1)))
    return a, out, trace.report([n // 256, 1, 1], [256, 1, 1], stats.threads)


def test_without_the_barrier_the_reversal_reads_slots_of_other_warps_not_yet_written():
    a, out, found = reverse(REVERSE.replace("BARRIER", ""))
    expected = a.reshape(-1, 256)[:, ::-1].ravel()
    assert not np.array_equal(out, expected)
    warp_of = np.arange(512) % 256 // 32
    same_warp = warp_of == (255 - np.arange(512) % 256) // 32
    assert np.array_equal(out[same_warp], expected[same_warp])  # a warp sees its own writes
    (race,) = found.hazards
    assert (race.kind, race.line) == ("race", 8) and "__syncthreads()" in race.message
    assert found.summary.startswith("line 8: a shared-memory race")


def test_with_the_barrier_it_is_right_and_warns_of_nothing():
    a, out, found = reverse(REVERSE.replace("BARRIER", "__syncthreads();"))
    assert np.array_equal(out, a.reshape(-1, 256)[:, ::-1].ravel())
    assert found.hazards == []


def test_reading_a_slot_no_thread_wrote_is_warned_on_its_line():
    source = REVERSE.replace("tile[t] = a[base + t];", "if (t < 128) tile[t] = a[base + t];")
    _, _, found = reverse(source.replace("BARRIER", "__syncthreads();"))
    (uninitialised,) = found.hazards
    assert (uninitialised.kind, uninitialised.line, uninitialised.lanes) == ("uninitialised", 8, 256)
