"""The memory-access kernels of module 2, written once as CUDA Python sources, for the simulator and for a GPU.

Seven cases: a copy whose loads are 1 (coalesced), 2, 4 and 32 elements apart
(`y[i] = x[i * stride]`, coalesced stores), a naive transpose (coalesced loads,
stores 32 rows apart), and a tiled transpose through a `cuda.shared.array`
tile of (32, 32) floats (column reads: 32-way bank conflicts) and of (32, 33)
(the padding that removes them). The same source runs on Numba's simulator
under the memory tracer (small sizes: the simulator costs ~140 µs a thread)
and on the GPU under Nsight Compute (sizes that fill an H200).

`bench/ncu_vs_sim.py` compares the two; nothing here imports Numba.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

COPY_STRIDE = """\
from numba import cuda


@cuda.jit
def copy_stride(x, y, stride):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = x[i * stride]
"""

NAIVE_TRANSPOSE = """\
from numba import cuda


@cuda.jit
def naive_transpose(a, out):
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        out[x, y] = a[y, x]
"""

TILED_TRANSPOSE = """\
from numba import cuda, float32

TILE = 32
ROWS = 8
WIDTH = {width}  # a module global, so Numba sees a constant shape


@cuda.jit
def tiled_transpose(a, out):
    tile = cuda.shared.array((TILE, WIDTH), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):
        tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    y = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[tx, ty + j]
"""

COPY_BLOCK = 256
TILE, ROWS = 32, 8


@dataclass(frozen=True)
class MemoryKernel:
    """One case: its source, entry, what it is made to show, and how to launch it at a size."""

    name: str
    entry: str
    source: str
    shows: str
    sim_size: int  # elements copied, or the side of the square matrix
    gpu_size: int
    stride: int = 0  # copies only

    @property
    def is_copy(self) -> bool:
        return self.entry == "copy_stride"

    def launch(self, size: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(grid, block) for this size."""
        if self.is_copy:
            return (math.ceil(size / COPY_BLOCK),), (COPY_BLOCK,)
        if self.entry == "naive_transpose":
            return (size // TILE, size // ROWS), (TILE, ROWS)
        return (size // TILE, size // TILE), (TILE, ROWS)

    def warps(self, size: int) -> int:
        """Warps launched at this size (every block here is a whole number of warps)."""
        grid, block = self.launch(size)
        return math.prod(grid) * math.ceil(math.prod(block) / 32)

    def arguments(self, size: int, array: Callable[[tuple[int, ...]], Any]) -> list[Any]:
        """The kernel's arguments, with `array(shape)` making each float32 array (NumPy, or device memory)."""
        if self.is_copy:
            return [array((size * self.stride,)), array((size,)), self.stride]
        return [array((size, size)), array((size, size))]

    def correct(self, args: list[Any]) -> bool:
        """Whether the outputs (NumPy arrays) are what the kernel must compute."""
        import numpy as np

        if self.is_copy:
            x, y, stride = args
            return bool(np.array_equal(y, x[::stride][: y.size]))
        a, out = args
        return bool(np.array_equal(out, a.T))


def _copy(name: str, stride: int, shows: str) -> MemoryKernel:
    return MemoryKernel(name, "copy_stride", COPY_STRIDE, shows, sim_size=1024, gpu_size=1 << 22, stride=stride)


KERNELS: dict[str, MemoryKernel] = {
    k.name: k
    for k in (
        _copy("coalesced", 1, "32 consecutive floats per warp: 4 sectors per load"),
        _copy("stride_2", 2, "loads 2 elements apart: twice the sectors"),
        _copy("stride_4", 4, "loads 4 elements apart: four times the sectors"),
        _copy("stride_32", 32, "loads 32 elements apart: one sector per thread"),
        MemoryKernel(
            "naive_transpose",
            "naive_transpose",
            NAIVE_TRANSPOSE,
            "coalesced loads, stores a row apart: 32 sectors per store",
            sim_size=64,
            gpu_size=4096,
        ),
        MemoryKernel(
            "tiled_32x32",
            "tiled_transpose",
            TILED_TRANSPOSE.replace("{width}", "TILE"),
            "coalesced both ways through a [32][32] tile: its column reads are 32-way bank conflicts",
            sim_size=64,
            gpu_size=4096,
        ),
        MemoryKernel(
            "tiled_32x33",
            "tiled_transpose",
            TILED_TRANSPOSE.replace("{width}", "TILE + 1"),
            "the [32][33] padding: no bank conflicts",
            sim_size=64,
            gpu_size=4096,
        ),
    )
}
