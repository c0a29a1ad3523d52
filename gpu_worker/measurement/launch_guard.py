"""What the timed launches compute is checked too: fresh inputs, poisoned outputs, a fingerprint per sample.

A timer that only times can be fooled by a kernel that computes on its first
launch and then does nothing, replays an answer it cached in a `__device__`
buffer, or defers its work to the next launch. `LaunchGuard` runs the timed
phase on input sets of its own (fresh seeds, never the checked launch's
inputs, alternated sample by sample so an answer cached for one set is wrong
for the other), poisons the outputs before every timed sample (outside the
events, before the L2 flush), and after every sample's stop event takes a
fingerprint of the outputs on the device (outside the events). When the
cold samples are done, `finish` reads the fingerprints: every sample of a set
must leave the outputs the set's last sample left, and those outputs are then
checked against the expected ones for that set (`checker` on the device).

The fingerprint is a sum over 32-bit words of (word + 1) * (2i + 1) * φ64
modulo 2^64: order-free, so atomics make it deterministic. `fingerprint_host`
is the same function in NumPy, for tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

FINGERPRINT_SOURCE = r"""
extern "C" __global__ void warplab_fingerprint(const unsigned int* w, unsigned long long n, unsigned long long* slot)
{
    unsigned long long acc = 0;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += ((unsigned long long)w[i] + 1ull) * (2ull * i + 1ull) * 0x9E3779B97F4A7C15ull;
    for (int offset = 16; offset > 0; offset >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(slot, acc);
}
"""
MAX_SLOTS = 4096  # samples fingerprinted per measurement; the stop rule takes fewer
PHI64 = 0x9E3779B97F4A7C15


def fingerprint_host(array: np.ndarray) -> int:
    """The device fingerprint of `array`, computed in NumPy."""
    words = np.ascontiguousarray(array).view(np.uint32).ravel().astype(np.uint64)
    index = np.arange(words.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum((words + np.uint64(1)) * (np.uint64(2) * index + np.uint64(1)) * np.uint64(PHI64)))


def fingerprint_kernel(cp: Any) -> Any:
    """The harness's fingerprint kernel (CuPy memoizes it per process; a spare compiles it ahead)."""
    return cp.RawKernel(FINGERPRINT_SOURCE, "warplab_fingerprint")


class LaunchGuard:
    """Alternates input sets, poisons before and fingerprints after each timed sample (see the module)."""

    def __init__(self, cp: Any, launches: list[Callable[[Any], None]], outputs: list[list[Any]]):
        self.cp = cp
        self.launches = launches  # one per input set, each on its own device arrays
        self.outputs = outputs  # per set, its output arrays on the device
        self.kernel = fingerprint_kernel(cp)
        self.slots = cp.zeros((MAX_SLOTS, max(1, len(outputs[0]))), dtype=cp.uint64)
        self.current = 0
        self.count = 0
        self.sets: list[int] = []  # the input set of each fingerprinted sample
        # per set, the fingerprint of its outputs once the samples are done (`seal`); made here, with the guard
        # (correctness work), not inside the timing's exclusive hold, where `seal` is called
        self.finals = cp.zeros((len(outputs), max(1, len(outputs[0]))), dtype=cp.uint64)
        self.sealed = False

    def launch(self, stream: Any) -> None:
        self.launches[self.current](stream)

    def before(self, stream: Any) -> None:
        """Next input set; its outputs poisoned (NaN for floats, all ones for integers)."""
        self.current = self.count % len(self.launches)
        for out in self.outputs[self.current]:
            self.cp.cuda.runtime.memsetAsync(out.data.ptr, 0xFF, out.nbytes, stream.ptr)

    def _fingerprint(self, stream: Any, out: Any, slot: Any) -> None:
        words = out.nbytes // 4
        blocks = max(1, min(1024, -(-words // 256)))
        self.kernel((blocks,), (256,), (out, self.cp.uint64(words), slot), stream=stream)

    def after(self, stream: Any) -> None:
        """Fingerprint what the sample just left in the outputs."""
        if self.count < MAX_SLOTS:
            for j, out in enumerate(self.outputs[self.current]):
                self._fingerprint(stream, out, self.slots[self.count, j : j + 1])
            self.sets.append(self.current)
        self.count += 1

    def seal(self, stream: Any) -> None:
        """Queue the fingerprints of what each set's outputs hold now (the GPU's work of `finish`)."""
        self.sealed = True
        for k, outs in enumerate(self.outputs):
            for j, out in enumerate(outs):
                self._fingerprint(stream, out, self.finals[k, j : j + 1])

    def finish(self, stream: Any) -> dict[str, Any]:
        """How many samples left outputs other than their set's last sample did (0 for an honest kernel).

        The reading happens here, on the host; `seal` (called inside the timing lock, before anything
        else touches the outputs) queued the final fingerprints, or this does now.
        """
        if not self.sealed:
            self.seal(stream)
        stream.synchronize()
        seen = self.slots[: len(self.sets)].get()
        last = self.finals.get()
        varied = sum(1 for i, k in enumerate(self.sets) if not np.array_equal(seen[i], last[k]))
        return {
            "input_sets": len(self.outputs),
            "samples_fingerprinted": len(self.sets),
            "samples_unlike_their_set": int(varied),
            "method": "fresh inputs per set, outputs poisoned before and fingerprinted after every timed sample",
        }
