"""Shared memory with barrier epochs: it runs loads and stores and sees the races and uninitialised reads.

Between two barriers of a block (an epoch) it remembers which warp last wrote and read each 4-byte
word. A load of a word another warp wrote in the same epoch is a race (no `__syncthreads()` between
the two): it returns the word as it was at the epoch's start, one outcome a GPU allows (the writer
had not run yet) and the one that shows the bug, so a racy kernel is wrong here as it sometimes is on
a GPU. A store to a word another warp read or wrote in the epoch is a race too, reported but run as
written. A load of a word no thread ever wrote is an uninitialised read (a GPU gives garbage; here it
reads zero). Each is counted for the report, where it becomes a warning on the learner's line.
"""

from __future__ import annotations

import numpy as np

from gpu_worker.ptx.memory import BlockMemory

NOBODY, SEVERAL = -1, -2


class SharedMemory(BlockMemory):
    """One block's shared memory per row, with who wrote and read each word in the current epoch."""

    def __init__(self, rows: int, size: int):
        super().__init__(rows, size, "shared")
        words = self.data.shape[1] // 4
        self.writer = np.full((rows, words), NOBODY, dtype=np.int64)
        self.reader = np.full((rows, words), NOBODY, dtype=np.int64)
        self.written = np.zeros((rows, words), dtype=np.bool_)
        self.snapshot = self.data.copy()

    def new_epoch(self, blocks: np.ndarray) -> None:
        """A barrier released these blocks (a boolean row mask): what they wrote is now seen by all."""
        self.writer[blocks] = NOBODY
        self.reader[blocks] = NOBODY
        self.snapshot[blocks] = self.data[blocks]

    def _words(self, offsets: np.ndarray, size: int) -> list[np.ndarray]:
        return [offsets // 4 + k for k in range(max(1, size // 4))]

    def load(
        self, rows: np.ndarray, offsets: np.ndarray, dtype: np.dtype, count: int, warps: np.ndarray
    ) -> tuple[np.ndarray, int, int]:
        """(values, lanes that raced, lanes that read uninitialised words)."""
        values = self.gather(rows, offsets, dtype, count)
        raced = np.zeros(len(offsets), dtype=np.bool_)
        uninitialised = np.zeros(len(offsets), dtype=np.bool_)
        for words in self._words(offsets, dtype.itemsize * count):
            writer = self.writer[rows, words]
            raced |= (writer != NOBODY) & (writer != warps)
            uninitialised |= ~self.written[rows, words]
            seen = self.reader[rows, words]
            self.reader[rows, words] = np.where((seen == NOBODY) | (seen == warps), warps, SEVERAL)
        if raced.any():
            stale = self.data
            self.data = self.snapshot
            try:
                before = self.gather(rows[raced], offsets[raced], dtype, count)
            finally:
                self.data = stale
            values = np.array(values, copy=True)
            values[raced] = before
        return values, int(raced.sum()), int(uninitialised.sum())

    def store(
        self, rows: np.ndarray, offsets: np.ndarray, values: np.ndarray, dtype: np.dtype, warps: np.ndarray
    ) -> int:
        """Store; the number of lanes whose word another warp read or wrote in this epoch."""
        self.scatter(rows, offsets, values, dtype)
        raced = np.zeros(len(offsets), dtype=np.bool_)
        for words in self._words(offsets, values.reshape(len(offsets), -1).shape[1] * dtype.itemsize):
            writer, reader = self.writer[rows, words], self.reader[rows, words]
            raced |= ((writer != NOBODY) & (writer != warps)) | ((reader != NOBODY) & (reader != warps))
            self.writer[rows, words] = np.where((writer == NOBODY) | (writer == warps), warps, SEVERAL)
            self.written[rows, words] = True
        return int(raced.sum())
