"""A sandbox whose worker is killed with SIGKILL dies within 5 s: nothing of a job outlives the process running it.

A real process (standing in for a worker's pool process) starts a spare sandbox, which imports its backend and
waits for a request; the test kills that process with SIGKILL and watches every process below it. With
bubblewrap, `--die-with-parent`; without it (unshare), the child's PR_SET_PDEATHSIG (`sandbox.die_with_parent`).
The same is checked under Celery, for the main and the pool process, in
tests/labs/runs/test_chaos_kills_lose_nothing.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_worker.isolation import sandbox
from tests import processes

pytestmark = pytest.mark.integration
# unshare runs the job as 65534, which must be able to read Python (not so under /root, where this box has it)
UNSHARE_USABLE = (
    shutil.which("unshare") is not None
    and os.geteuid() == 0
    and all(sandbox.everyone_can_read(Path(p)) for p in (sys.base_prefix, sys.prefix, sandbox.PACKAGE_DIR))
)

WORKER = """
import sys, time
from gpu_worker.isolation import sandbox
from gpu_worker.protocol import Limits
if sys.argv[1] == "unshare":
    sandbox.find_bwrap = lambda: None
sandbox.start("sim", Limits(wall_seconds=60), spare_cpu_allowance=60)
print("started", flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize(
    "tool",
    [
        pytest.param("bwrap", marks=pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")),
        pytest.param(
            "unshare",
            marks=pytest.mark.skipif(not UNSHARE_USABLE, reason="needs unshare, root, and Python readable by 65534"),
        ),
    ],
)
def test_a_sandbox_dies_within_5_s_of_its_killed_worker(tool):
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, tool], stdout=subprocess.PIPE, text=True, cwd=processes.ROOT
    )
    try:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "started"
        time.sleep(1.0)  # the spare is importing its backend, or waiting for its request
        below = processes.descendants(worker.pid)
        assert processes.alive(below), "the sandbox did not stay up"
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        killed = time.monotonic()
        while processes.alive(below) and time.monotonic() - killed < 5:
            time.sleep(0.05)
        assert processes.alive(below) == [], f"{tool}: still running 5 s after the worker died"
    finally:
        for pid in processes.alive(processes.descendants(worker.pid)):
            os.kill(pid, signal.SIGKILL)
        if worker.poll() is None:
            worker.kill()
