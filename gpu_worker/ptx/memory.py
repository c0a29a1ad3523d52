"""The address spaces of one launch: global buffers, per-block shared memory, per-thread local memory.

Every access is checked before it is made: the address must fall inside one buffer (or the block's
shared memory, or the thread's local memory) for all its bytes, and be aligned to the access size,
as a GPU requires. Global buffers are the launch's arrays themselves (a store writes the caller's
array) placed in the executor's own address space: buffer i starts at (i + 1) << 40, so a pointer
says which buffer it is in, and any pointer arithmetic that leaves a buffer is caught. Generic
addresses put shared memory at `SHARED_WINDOW` and local memory at `LOCAL_WINDOW`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

GLOBAL_SHIFT = 40
OFFSET_MASK = (1 << GLOBAL_SHIFT) - 1
SHARED_WINDOW = 1 << 56
LOCAL_WINDOW = 2 << 56
WINDOW_BYTES = 1 << 32


class Fault(Exception):
    """An access no GPU would make; `position` is the first offending thread within the access's group."""

    def __init__(self, position: int, message: str):
        super().__init__(message)
        self.position = position
        self.message = message


@dataclass
class Buffer:
    """One global allocation: its bytes (a view of the caller's array) and how to name it to a learner."""

    name: str
    data: np.ndarray  # uint8, one dimension
    shape: tuple[int, ...] = ()
    itemsize: int = 1
    views: dict[np.dtype, np.ndarray] = field(default_factory=dict)

    def view(self, dtype: np.dtype) -> np.ndarray:
        found = self.views.get(dtype)
        if found is None:
            usable = len(self.data) - len(self.data) % dtype.itemsize
            found = self.views[dtype] = self.data[:usable].view(dtype)
        return found

    def describe(self) -> str:
        count = len(self.data) // max(self.itemsize, 1)
        return f"'{self.name}' ({count} elements of {self.itemsize} bytes, {len(self.data)} bytes)"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class GlobalMemory:
    """The launch's global buffers, addressed as `(index + 1) << GLOBAL_SHIFT` plus an offset."""

    def __init__(self) -> None:
        self.buffers: list[Buffer] = []

    def add(self, buffer: Buffer) -> int:
        """Place a buffer; its base address."""
        self.buffers.append(buffer)
        return len(self.buffers) << GLOBAL_SHIFT

    def locate(self, addresses: np.ndarray, size: int, verb: str) -> tuple[np.ndarray, np.ndarray]:
        """(buffer index, byte offset) of each address, after checking bounds and alignment; Fault if any fails."""
        addresses = addresses.astype(np.uint64, copy=False)
        which = (addresses >> np.uint64(GLOBAL_SHIFT)).astype(np.int64) - 1
        offsets = (addresses & np.uint64(OFFSET_MASK)).astype(np.int64)
        known = (which >= 0) & (which < len(self.buffers))
        sizes = np.array([len(b.data) for b in self.buffers] or [0], dtype=np.int64)
        inside = known & (offsets + size <= sizes[np.clip(which, 0, max(len(self.buffers) - 1, 0))])
        if not inside.all():
            position = int(np.flatnonzero(~inside)[0])
            raise Fault(position, self._outside(int(addresses[position]), size, verb))
        if size > 1 and (offsets % size).any():
            position = int(np.flatnonzero(offsets % size)[0])
            raise Fault(
                position,
                f"misaligned {verb} of {size} bytes at byte {int(offsets[position])} of "
                f"{self.buffers[int(which[position])].describe()}: it must start at a multiple of {size}",
            )
        return which, offsets

    def _outside(self, address: int, size: int, verb: str) -> str:
        index, offset = (address >> GLOBAL_SHIFT) - 1, address & OFFSET_MASK
        what = f"out-of-bounds {verb} of {size} bytes"
        if address == 0:
            return f"{what} at address 0 (a null pointer)"
        if not 0 <= index < len(self.buffers):
            return f"{what} at address {address:#x}, which is in none of the kernel's buffers"
        buffer = self.buffers[index]
        past = offset + size - len(buffer.data)
        if offset >= len(buffer.data) and buffer.itemsize:
            element = offset // buffer.itemsize
            return f"{what}: element {element} of {buffer.describe()}, {_plural(past, 'byte')} past its end"
        return f"{what} at byte {offset} of {buffer.describe()}, {_plural(past, 'byte')} past its end"

    def gather(self, which: np.ndarray, offsets: np.ndarray, dtype: np.dtype, count: int = 1) -> np.ndarray:
        """The values at checked addresses; shape (n,) or (n, count) for a vector access."""
        if len(offsets) and (which == which[0]).all():
            view, base = self.buffers[int(which[0])].view(dtype), offsets // dtype.itemsize
            return view[base] if count == 1 else np.stack([view[base + k] for k in range(count)], axis=1)
        out = np.empty((len(offsets), count), dtype=dtype)
        for index in np.unique(which):
            rows = which == index
            view, base = self.buffers[int(index)].view(dtype), offsets[rows] // dtype.itemsize
            for k in range(count):
                out[rows, k] = view[base + k]
        return out[:, 0] if count == 1 else out

    def scatter(self, which: np.ndarray, offsets: np.ndarray, values: np.ndarray, dtype: np.dtype) -> None:
        """Store values, shape (n,) or (n, count), at checked addresses; of two stores to one place the later lane's."""
        values = values.reshape(len(offsets), -1)
        for index in np.unique(which) if len(offsets) else []:
            rows = which == index
            view, base = self.buffers[int(index)].view(dtype), offsets[rows] // dtype.itemsize
            for k in range(values.shape[1]):
                view[base + k] = values[rows, k]


class BlockMemory:
    """Shared memory (one array of bytes per block in the wave) or local memory (one per thread)."""

    def __init__(self, rows: int, size: int, space: str):
        self.size = size
        self.space = space
        padded = max(16, -(-size // 16) * 16)
        self.data = np.zeros((rows, padded), dtype=np.uint8)

    def check(self, offsets: np.ndarray, size: int, verb: str) -> np.ndarray:
        offsets = offsets.astype(np.int64, copy=False)
        bad = (offsets < 0) | (offsets + size > self.size)
        if bad.any():
            position = int(np.flatnonzero(bad)[0])
            offset = int(offsets[position])
            raise Fault(
                position,
                f"out-of-bounds {self.space} {verb} of {size} bytes at byte {offset}: the {self.space} memory "
                f"is {self.size} bytes",
            )
        if size > 1 and (offsets % size).any():
            position = int(np.flatnonzero(offsets % size)[0])
            raise Fault(position, f"misaligned {self.space} {verb} of {size} bytes at byte {int(offsets[position])}")
        return offsets

    def gather(self, rows: np.ndarray, offsets: np.ndarray, dtype: np.dtype, count: int = 1) -> np.ndarray:
        view = self.data.view(dtype)
        base = offsets // dtype.itemsize
        out = np.stack([view[rows, base + k] for k in range(count)], axis=1)
        return out[:, 0] if count == 1 else out

    def scatter(self, rows: np.ndarray, offsets: np.ndarray, values: np.ndarray, dtype: np.dtype) -> None:
        view = self.data.view(dtype)
        values = values.reshape(len(offsets), -1)
        base = offsets // dtype.itemsize
        for k in range(values.shape[1]):
            view[rows, base + k] = values[:, k]
