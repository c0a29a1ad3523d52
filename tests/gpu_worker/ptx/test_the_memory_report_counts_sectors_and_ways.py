"""Sectors per request and bank-conflict ways come out at their analytic values for the patterns module 2 teaches."""

from __future__ import annotations

import numpy as np
import pytest
from lab_cases import cuda_ptx

from gpu_worker.ptx.abi import arguments
from gpu_worker.ptx.executor import Executor, Launch
from gpu_worker.ptx.parser import parse
from gpu_worker.ptx.report import MemoryTrace
from gpu_worker.science.memtrace_report import MemoryReport, Space

COPY = """
extern "C" __global__ void copy(const float* a, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = a[(i * STRIDE) % n];
}
"""
TILE = """
extern "C" __global__ void tile_read(const float* a, float* out, int n)
{
    __shared__ float tile[32][32 + PAD];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = a[y * 32 + x];
    __syncthreads();
    out[y * 32 + x] = READ;
}
"""


def report(
    source: str, entry: str, n: int, grid: tuple[int, int, int], block: tuple[int, int, int], side: int = 0
) -> MemoryReport:
    ptx = cuda_ptx(source)
    assert ptx is not None
    module = parse(ptx)
    kernel = module.kernels[entry]
    a, out = np.arange(n, dtype=np.float32), np.zeros(n, dtype=np.float32)
    params, memory = arguments(kernel, "cuda", ["a", "out", "n"], [a, out, np.int32(side or n)])
    trace = MemoryTrace()
    stats = Executor(module, kernel, params, memory, trace=trace).run(Launch(grid, block))
    return trace.report(grid, block, stats.threads)


def line(found: MemoryReport, number: int, kind: str, access: str):
    (row,) = [r for r in found.lines if (r.line, r.kind, r.access) == (number, kind, access)]
    return row


@pytest.mark.parametrize(("stride", "sectors"), [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_a_warps_float_load_touches_4_sectors_when_coalesced_and_more_as_threads_spread(stride, sectors):
    found = report(COPY.replace("STRIDE", str(stride)), "copy", 4096, (4, 1, 1), (256, 1, 1))
    load = line(found, 5, "global", "load")
    assert load.sectors_per_request == sectors and load.requests == 32
    assert load.ideal_sectors_per_request == 4 and load.lane_stride_elements == stride
    assert line(found, 5, "global", "store").sectors_per_request == 4


def test_a_naive_transposes_column_store_touches_32_sectors_per_request():
    source = """
extern "C" __global__ void t(const float* a, float* out, int n)
{
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    out[x * n + y] = a[y * n + x];
}
"""
    found = report(source, "t", 64 * 64, (2, 2, 1), (32, 32, 1), side=64)
    assert line(found, 5, "global", "load").sectors_per_request == 4
    store = line(found, 5, "global", "store")
    assert store.sectors_per_request == 32 and store.severity == "warning"


@pytest.mark.parametrize(
    ("pad", "read", "ways"),
    [(1, "tile[x][y]", 1), (0, "tile[x][y]", 32), (2, "tile[x][y]", 2), (0, "tile[y][0]", 1), (0, "tile[y][x]", 1)],
    ids=["padded [32][33] column: 1-way", "unpadded column: 32-way", "pad 2: 2-way", "broadcast", "row"],
)
def test_a_shared_tile_read_has_the_bank_conflicts_its_padding_gives(pad, read, ways):
    source = TILE.replace("PAD", str(pad)).replace("READ", read)
    found = report(source, "tile_read", 32 * 32, (1, 1, 1), (32, 32, 1))
    assert line(found, 6, "shared", "store").max_bank_conflict_ways == 1
    read = line(found, 8, "shared", "load")
    assert read.max_bank_conflict_ways == ways and read.requests == 32


def _triton_load(per_access: bool, lane_bytes: int, line: int = 9) -> MemoryReport:
    """Two warps' `tl.load` as Triton 3.9 compiles it: four word loads a thread, its words neighbours."""
    trace = MemoryTrace(per_access=per_access)
    space = Space("global", (8192,), 4)
    warps, lanes = np.repeat([0, 1], 32), np.tile(np.arange(32), 2)
    for word in range(4):
        addresses = (warps * 32 + lanes) * lane_bytes + 4 * word
        trace.record((line, "load", "global", 0), space, warps, lanes, addresses, 4)
    return trace.report((1, 1, 1), (64, 1, 1), 64)


def test_a_tritons_load_of_neighbouring_words_is_one_access_per_warp_not_four_of_16_sectors():
    per_instruction = line(_triton_load(False, 16), 9, "global", "load")
    assert per_instruction.sectors_per_request == 16 and per_instruction.requests == 8
    per_access = line(_triton_load(True, 16), 9, "global", "load")  # the later words hit the first's sectors
    assert per_access.sectors_per_request == 4 and per_access.requests == 8 and per_access.severity == "ok"
    assert per_access.ideal_sectors_per_request == 4 and per_access.max_sectors_per_request == 4


def test_per_access_a_strided_triton_load_still_touches_more_sectors_than_it_needs():
    strided = line(_triton_load(True, 128), 9, "global", "load")  # each thread's four words in a sector of its own
    assert strided.sectors_per_request == 8 and strided.ideal_sectors_per_request == 4
    assert strided.severity == "warning"


def test_per_access_only_a_sites_instructions_run_back_to_back_are_one_access():
    trace = MemoryTrace(per_access=True)
    space = Space("global", (8192,), 4)
    warps, lanes = np.zeros(32, dtype=np.int64), np.arange(32)
    for word in range(2):  # a's word, then b's: two accesses, not one
        for line_number in (9, 10):
            trace.record((line_number, "load", "global", 0), space, warps, lanes, lanes * 8 + 4 * word, 4)
    found = trace.report((1, 1, 1), (32, 1, 1), 32)
    assert [(r.line, r.requests, r.sectors_per_request) for r in found.lines] == [(9, 2, 8), (10, 2, 8)]
