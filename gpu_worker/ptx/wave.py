"""A wave: the blocks of a launch that run together, their threads laid out in one set of NumPy arrays.

Thread t of a wave is thread t % block_threads of the wave's block t // block_threads; warps are 32
consecutive threads of a block, numbered over the whole launch so the memory report can tell them
apart. Special registers (%tid, %ctaid, %laneid, ...) are arrays over the wave's threads, made once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpu_worker.ptx.memory import BlockMemory
from gpu_worker.ptx.shared import SharedMemory

WARP = 32


@dataclass
class Wave:
    """The state of the blocks running together: registers, program counters, memories, thread indices."""

    threads: int
    regs: list[np.ndarray]
    pc: np.ndarray
    live: np.ndarray
    waiting: np.ndarray
    block_of: np.ndarray  # the thread's block, counted within the wave
    lane: np.ndarray
    carry: np.ndarray  # the carry flag of `.cc` arithmetic, one per thread
    warp: np.ndarray  # unique over the launch
    special: dict[str, np.ndarray]
    shared: SharedMemory
    local: BlockMemory
    block_threads: int
    exited: int = 0
    parked: int = 0
    coords: dict[str, np.ndarray] = field(default_factory=dict)


def three(values: tuple[int, ...]) -> tuple[int, int, int]:
    padded = (*values, 1, 1, 1)[:3]
    return int(padded[0]), int(padded[1]), int(padded[2])


def make_wave(
    first: int,
    count: int,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared: int,
    registers: list[np.dtype],
    local_bytes: int,
) -> Wave:
    """Blocks `first` to `first + count - 1` of the launch, ready to run: registers zeroed, every thread at 0."""
    block_threads = block[0] * block[1] * block[2]
    threads = count * block_threads
    position = np.arange(threads, dtype=np.int64)
    local_id = position % block_threads
    block_of = position // block_threads
    block_id = first + block_of
    warps_per_block = -(-block_threads // WARP)
    coords = {
        "%tid.x": local_id % block[0],
        "%tid.y": (local_id // block[0]) % block[1],
        "%tid.z": local_id // (block[0] * block[1]),
        "%ctaid.x": block_id % grid[0],
        "%ctaid.y": (block_id // grid[0]) % grid[1],
        "%ctaid.z": block_id // (grid[0] * grid[1]),
    }
    special = {name: values.astype(np.uint32) for name, values in coords.items()}
    for axis, n, g in zip("xyz", block, grid, strict=True):
        special[f"%ntid.{axis}"] = np.full(threads, n, dtype=np.uint32)
        special[f"%nctaid.{axis}"] = np.full(threads, g, dtype=np.uint32)
    lane = local_id % WARP
    special["%laneid"] = lane.astype(np.uint32)
    special["%warpid"] = (local_id // WARP).astype(np.uint32)
    special["%nwarpid"] = np.full(threads, warps_per_block, dtype=np.uint32)
    for name, test in (("eq", np.equal), ("lt", np.less), ("le", np.less_equal), ("gt", np.greater)):
        special[f"%lanemask_{name}"] = np.array(
            [sum(1 << k for k in range(WARP) if test(k, int(i))) for i in range(WARP)], dtype=np.uint32
        )[lane]
    regs = [np.zeros(threads, dtype=t) for t in registers]
    return Wave(
        threads=threads,
        regs=regs,
        pc=np.zeros(threads, dtype=np.int64),
        live=np.ones(threads, dtype=np.bool_),
        waiting=np.zeros(threads, dtype=np.bool_),
        block_of=block_of,
        lane=lane,
        carry=np.zeros(threads, dtype=np.bool_),
        warp=block_id * warps_per_block + local_id // WARP,
        special=special,
        shared=SharedMemory(count, shared),
        local=BlockMemory(threads if local_bytes else 1, local_bytes, "local"),
        block_threads=block_threads,
        coords=coords,
    )
