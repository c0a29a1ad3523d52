"""The timing harness reads the device's fixed facts once a process: a job's later sizes are timed inside the
exclusive hold of the GPU lock that its first size took, and `cudaGetDeviceProperties` (every attribute of the
device, for the L2's size) and the NVML reference clock were read again at every size there (run 30).

The CuPy and NVML here are stand-ins that count what is asked of them: the harness's arithmetic and its caching
are what is tested, no GPU figure is made up (the GPU itself times in `test_gpu_timing.py`).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpu_worker.measurement import timing


@pytest.fixture(autouse=True)
def _fresh_process_caches():
    """A process's kept harness and facts, as a new process starts them: keyed by the objects' ids, which a
    stand-in of an earlier test may have had (CuPy's module never goes away)."""
    timing._FACTS.clear()
    timing._KEPT.clear()
    yield
    timing._FACTS.clear()
    timing._KEPT.clear()


class _CountingCupy:
    """As much of CuPy as the harness touches without a hold kernel: the device, its properties, a buffer."""

    uint8 = "uint8"

    def __init__(self, l2_bytes: int):
        self.property_reads = 0
        self.l2_bytes = l2_bytes

        def properties(device: int) -> dict:
            self.property_reads += 1
            return {"l2CacheSize": self.l2_bytes}

        self.cuda = SimpleNamespace(Device=lambda: SimpleNamespace(id=0), runtime=SimpleNamespace())
        self.cuda.runtime.getDeviceProperties = properties

    def empty(self, nbytes: int, dtype: str) -> bytearray:
        return bytearray(16)  # the flush buffer's size is the harness's arithmetic, checked on `nbytes`


class _CountingNvml:
    def __init__(self, mhz: int):
        self.reads = 0
        self.mhz = mhz

    def reference_clock(self) -> int:
        self.reads += 1
        return self.mhz


def test_a_later_sizes_harness_reads_neither_the_devices_properties_nor_its_clock_again():
    cp, nvml = _CountingCupy(l2_bytes=50 * 2**20), _CountingNvml(1980)
    config = timing.TimingConfig(hold=False)
    first = timing._harness(cp, config, nvml)
    later = [timing._harness(cp, config, nvml) for _ in range(3)]
    assert cp.property_reads == 1 and nvml.reads == 1
    assert first.flush is not None and first.flush.nbytes == 2 * 50 * 2**20  # twice the L2, flushed each sample
    assert all(h.reference_clock == 1980 and h.flush is first.flush for h in later)


def test_another_gpu_in_the_same_process_has_its_own_facts():
    config = timing.TimingConfig(hold=False)
    small, large = _CountingCupy(l2_bytes=6 * 2**20), _CountingCupy(l2_bytes=60 * 2**20)
    assert timing._harness(small, config, None).flush.nbytes == 12 * 2**20
    assert timing._harness(large, config, None).flush.nbytes == 120 * 2**20
    assert timing._harness(small, config, None).reference_clock is None  # without NVML, no reference clock
