"""The instructions in which threads see one another: shuffles and votes within a warp, and atomics.

Each `decode` function turns one instruction into a step of the `Executor` (the same shape as its
own steps); the helpers compute a warp's ballot of the lanes standing on an instruction, and refuse
a `.sync` instruction whose mask names a lane that did not arrive with the others. An atomic runs its
threads in lane order, so each sees the values the lanes before it left, as one of the orders a GPU
could pick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gpu_worker.ptx.errors import Unsupported
from gpu_worker.ptx.memory import Fault
from gpu_worker.ptx.program import Instruction, Pair, Reg
from gpu_worker.ptx.values import DTYPES

if TYPE_CHECKING:
    from gpu_worker.ptx.executor import Executor, Index, Step
    from gpu_worker.ptx.wave import Wave

ALL = slice(None)
WARP = 32


ATOMIC_OPS: dict[str, Callable[..., Any]] = {
    "add": lambda old, b: old + b,
    "min": lambda old, b: min(old, b),
    "max": lambda old, b: max(old, b),
    "exch": lambda old, b: b,
    "and": lambda old, b: old & b,
    "or": lambda old, b: old | b,
    "xor": lambda old, b: old ^ b,
    "cas": lambda old, compare, value: value if old == compare else old,
    "inc": lambda old, b: old.dtype.type(0) if old >= b else old + old.dtype.type(1),
    "dec": lambda old, b: b if (old == 0 or old > b) else old - old.dtype.type(1),
}


def count(wave: Wave, idx: Index) -> int:
    return wave.threads if isinstance(idx, slice) else len(idx)


def select(wave: Wave, idx: Index, taken: Any) -> Index | None:
    """The threads of `idx` whose guard holds (None: none)."""
    taken = np.broadcast_to(taken, (count(wave, idx),))
    if taken.all():
        return idx
    if not taken.any():
        return None
    return np.flatnonzero(taken) if isinstance(idx, slice) else idx[taken]


def ballot(wave: Wave, idx: Index, values: np.ndarray) -> np.ndarray:
    """For each thread of `idx`, the bits of its warp's lanes (among `idx`) whose value is true."""
    warps = wave.warp[idx]
    bits = np.where(values, np.uint64(1) << wave.lane[idx].astype(np.uint64), np.uint64(0))
    unique, inverse = np.unique(warps, return_inverse=True)
    total = np.zeros(len(unique), dtype=np.uint64)
    np.bitwise_or.at(total, inverse, bits)
    return total[inverse].astype(np.uint32)


def check_converged(wave: Wave, idx: Index, masks: np.ndarray) -> None:
    """A `.sync` warp instruction whose mask names a lane that is not here: a deadlock or undefined on a GPU."""
    present = ballot(wave, idx, np.ones(count(wave, idx), np.bool_))
    exists = ballot(wave, ALL, np.ones(wave.threads, np.bool_))[0] if wave.block_threads >= WARP else present
    wanted = masks.astype(np.uint32) & np.uint32(exists if np.ndim(exists) == 0 else 0xFFFFFFFF)
    if (wanted & ~present).any():
        raise Fault(
            int(np.flatnonzero(wanted & ~present)[0]),
            "a warp-synchronous instruction (shfl.sync, vote.sync) names lanes in its mask that did not reach it "
            "together (they took another branch or exited)",
        )


def atomic(ex: Executor, ins: Instruction, index: int, space: str, type_: str, ops: list[str]) -> Step:
    if space not in ("global", "shared", "generic") or len(ops) != 1:
        raise Unsupported(f"`{ins.opcode}` is not supported")
    op = ops[0]
    combine = ATOMIC_OPS.get(op)
    if combine is None:
        raise Unsupported(f"`{ins.opcode}`: atomic .{op} is not supported")
    reduce_only = ins.base == "red"
    operands = list(ins.operands)
    dest = None if reduce_only else operands.pop(0)
    address = ex._address(operands[0])
    readers = [ex._reader(o, type_) for o in operands[1:]]
    write = ex._writer(dest, type_) if dest is not None else None
    dtype = DTYPES[type_]
    line = ex.lines[index]

    def atomic(wave: Wave, idx: Index, pc: int) -> None:
        n = count(wave, idx)
        addresses = address(wave, idx)
        args = [np.broadcast_to(read(wave, idx), (n,)) for read in readers]
        old = ex._access(wave, idx, addresses, space, dtype, 1, None, line, atomic=True)
        old = np.array(old, copy=True)
        new = np.empty_like(old)
        current: dict[int, Any] = {}
        for k in range(n):  # lane order: each thread sees the ones before it
            key = int(addresses[k])
            before = current.get(key, old[k])
            old[k] = before
            current[key] = combine(before, *(a[k] for a in args))
        for k in range(n):
            new[k] = current[int(addresses[k])]
        ex._access(wave, idx, addresses, space, dtype, 1, new.reshape(n, 1), line, atomic=True)
        if write is not None:
            write(wave, idx, old)

    return atomic


def shfl(ex: Executor, ins: Instruction) -> Step:
    mode = next((m for m in ins.mods if m in ("up", "down", "bfly", "idx")), None)
    if mode is None or "sync" not in ins.mods:
        raise Unsupported(f"`{ins.opcode}` is not supported (only shfl.sync)")
    dest, a, b, c, mask = ins.operands
    first, second = (dest.first, dest.second) if isinstance(dest, Pair) else (dest, None)
    read_a, read_b, read_c = ex._reader(a, "b32"), ex._reader(b, "u32"), ex._reader(c, "u32")
    read_mask = ex._reader(mask, "u32")
    write_d = ex._writer(first, "b32")
    write_p = ex._writer(second, "pred") if second is not None else None

    def shfl(wave: Wave, idx: Index, pc: int) -> None:
        n = count(wave, idx)
        threads = np.arange(wave.threads)[idx]
        lane = wave.lane[idx].astype(np.int64)
        bval = np.broadcast_to(read_b(wave, idx), (n,)).astype(np.int64) & 31
        cval = np.broadcast_to(read_c(wave, idx), (n,)).astype(np.int64)
        check_converged(wave, idx, np.broadcast_to(read_mask(wave, idx), (n,)))
        segmask = (cval >> 8) & 31
        max_lane = (lane & segmask) | (cval & 31 & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~segmask)
            ok = j <= max_lane
        source = threads - lane + j
        block_end = (threads // wave.block_threads + 1) * wave.block_threads
        ok &= (source >= 0) & (source < block_end)
        source = np.where(ok, source, threads)
        values = np.broadcast_to(read_a(wave, ALL), (wave.threads,))
        write_d(wave, idx, values[source])
        if write_p is not None:
            write_p(wave, idx, ok)

    return shfl


def vote(ex: Executor, ins: Instruction) -> Step:
    if ins.base == "activemask":
        write = ex._writer(ins.operands[0], "b32")
        return lambda wave, idx, pc: write(wave, idx, ballot(wave, idx, np.ones(count(wave, idx), np.bool_)))
    mode = next((m for m in ins.mods if m in ("all", "any", "uni", "ballot")), None)
    if mode is None or "sync" not in ins.mods:
        raise Unsupported(f"`{ins.opcode}` is not supported (only vote.sync)")
    dest, pred, mask = ins.operands
    negated = isinstance(pred, Reg) and pred.name.startswith("!")
    read = ex._reader(Reg(pred.name.lstrip("!")) if isinstance(pred, Reg) else pred, "pred")
    read_mask = ex._reader(mask, "u32")
    write = ex._writer(dest, "b32" if mode == "ballot" else "pred")

    def vote(wave: Wave, idx: Index, pc: int) -> None:
        n = count(wave, idx)
        check_converged(wave, idx, np.broadcast_to(read_mask(wave, idx), (n,)))
        values = np.broadcast_to(read(wave, idx), (n,))
        values = ~values if negated else values
        bits = ballot(wave, idx, values)
        if mode == "ballot":
            write(wave, idx, bits)
            return
        present = ballot(wave, idx, np.ones(n, np.bool_))
        if mode == "all":
            write(wave, idx, bits == present)
        elif mode == "any":
            write(wave, idx, bits != 0)
        else:
            write(wave, idx, (bits == 0) | (bits == present))

    return vote
