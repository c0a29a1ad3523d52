"""A timed size is flagged as taken on a shared GPU when a compute process that is not this worker's was there.

The engine reads NVML's process list itself (the sandboxed child's PID namespace
hides the others); here the list comes from a stand-in for NVML, holding the
PIDs of real processes: a child of this test process (one of the worker's own
sandboxes) and PID 1 (somebody else's).
"""

from __future__ import annotations

import os
import subprocess
import sys

from engine_factories import alices_job, vector_add_lab

from gpu_worker.measurement.device_info import DeviceState, descends_from
from gpu_worker.measurement.gpu_report import GpuReport
from gpu_worker.protocol import CheckInfo

SIZES = {"n": 1024}


class _ProcessList:
    """NVML's answer about compute processes, nothing else."""

    def __init__(self, pids: list[int]):
        self.pids = pids

    def state(self) -> DeviceState:
        return DeviceState(other_processes=[{"pid": p, "used_mib": 500} for p in self.pids], nvml=True)


def _timed_metrics(pids: list[int]) -> dict:
    job = alices_job(vector_add_lab().references["numba"], "numba")
    events: list = []
    checks = [CheckInfo(passed=True, sizes=SIZES)]
    report = GpuReport(job, [{"sizes": SIZES}], lambda kind, **f: events.append((kind, f)), checks)
    report.nvml = _ProcessList(pids)  # type: ignore[assignment]
    report.handle({"type": "occupancy", "index": 0, "occupancy": {"active_blocks_per_sm": 8}})
    report.handle({"type": "timing", "index": 0, "timing": {"median_ms": 0.01, "flags": []}})
    return report.metrics[0] | {"timing": report.timings[0]}


def test_a_process_of_this_worker_is_its_own_and_pid_1_is_not():
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"]) as child:
        try:
            assert descends_from(child.pid, os.getpid())
            assert not descends_from(1, os.getpid())
            assert not descends_from(os.getpid(), child.pid)
        finally:
            child.kill()


def test_another_users_process_on_the_gpu_flags_the_measurement_as_indicative():
    m = _timed_metrics([1])
    assert m["shared_gpu"] is True
    assert "indicative" in m["verdict"]
    assert m["timing"]["other_processes"] == [{"pid": 1, "used_mib": 500}]


def test_the_workers_own_sandbox_on_the_gpu_does_not_flag_it():
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"]) as child:
        try:
            m = _timed_metrics([child.pid])
        finally:
            child.kill()
    assert m["shared_gpu"] is False
    assert "other_processes" not in m["timing"]
