"""Chaos for the job ledger: runs while a sim worker's main process and pool process are killed with SIGKILL.

`Fleet` is one real sim worker (`python -m gpu_worker serve`), started again after each kill of its main
process; each kill reports how long the killed process's descendants (its pool process, their sandboxes)
lived on. `audit` reads the runs back from the database: lost, duplicated, left running, verdicts.
Used by tests/labs/runs/test_chaos_kills_lose_nothing.py (CI size) and bench/chaos.py (full size, with Redis
and PostgreSQL restarts on private servers).
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpu_worker.exercise.labspec import find_lab
from labs.models import Submission
from tests import processes

CASES = {case.name: case for case in find_lab("vector-add").cases}
# (source, the verdict it must get on the simulator), taken in turn
MIX = [
    (CASES[n].source, CASES[n].verdict_on("sim")) for n in ("reference-numba", "wrong-operator", "syntax-error-numba")
]
# The worker gives a dead consumer's job back after 10 s, looking every second; a job here takes a few seconds.
QUICK_RESTORE = {"WARPLAB_VISIBILITY_TIMEOUT": "10", "WARPLAB_RESTORE_SECONDS": "1"}
ORPHAN_WAIT = 10.0  # how long a kill waits for the killed process's descendants to die


@dataclass
class Kill:
    """One SIGKILL: which process, on which run, and how long what it had started lived on after it."""

    target: str  # "main" or "pool"
    run_id: int
    orphans: int
    orphans_gone_after: float | None  # None: some still alive after ORPHAN_WAIT


class Fleet:
    """One sim worker, killed and started again; `kills` records each kill."""

    def __init__(self, **env: str):
        self.env = {**QUICK_RESTORE, **env}
        self.starts = 0
        self.kills: list[Kill] = []
        self.worker = self._start()

    def _start(self) -> processes.Service:
        self.starts += 1
        return processes.start_sim_worker(f"worker-sim-chaos-{self.starts}", **self.env)

    def pool_process(self) -> int | None:
        main = self.worker.process.pid
        children = [pid for pid in processes.descendants(main) if _parent(pid) == main]
        return children[0] if children else None

    def kill(self, target: str, run_id: int) -> Kill:
        """SIGKILL the worker's main process (then start a new worker) or its pool process."""
        main = self.worker.process.pid
        victim = main if target == "main" else self.pool_process()
        if victim is None:
            raise RuntimeError("the worker has no pool process to kill")
        below = processes.descendants(victim)
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        if target == "main":
            self.worker.process.wait(timeout=30)
        while processes.alive(below) and time.monotonic() - killed_at < ORPHAN_WAIT:
            time.sleep(0.05)
        gone_after = None if processes.alive(below) else round(time.monotonic() - killed_at, 3)
        for pid in processes.alive(below):  # never leave one behind, even when the test is about to fail
            os.kill(pid, signal.SIGKILL)
        kill = Kill(target, run_id, len(below), gone_after)
        self.kills.append(kill)
        if target == "main":
            self.worker.log.close()
            self.worker = self._start()
        return kill

    def stop(self) -> None:
        self.worker.stop()


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def running_run(attempts_below: int) -> Submission | None:
    """The run the worker is on now, if a kill would leave it under `attempts_below` attempts; else None.

    The worker's run is the one with the latest lease: rows of lost attempts stay running until theirs runs out.
    """
    latest = Submission.objects.filter(status="running", attempts__gt=0).order_by("-lease_until").first()
    return latest if latest is not None and latest.attempts < attempts_below else None


@dataclass
class Audit:
    """What the database says about a set of runs after the chaos."""

    total: int
    finished: int
    left_running: list[int]
    lost: list[int]  # not finished, or finished without a result document
    duplicated: list[int]  # more than one final event
    wrong_verdict: list[int]
    errors: dict[int, str] = field(default_factory=dict)  # infrastructure errors and their messages
    attempts: dict[int, int] = field(default_factory=dict)  # how many runs needed how many attempts

    @property
    def clean(self) -> bool:
        return not (self.left_running or self.lost or self.duplicated or self.wrong_verdict or self.errors)


def audit(expected: dict[int, str]) -> Audit:
    """Read back the runs `expected` names (run id to the verdict it must get)."""
    runs = Submission.objects.filter(pk__in=expected).prefetch_related("events")
    left_running = [r.pk for r in runs if r.status in ("queued", "running")]
    unrecorded = {r.pk for r in runs if r.finished and not r.result}
    lost = sorted(set(left_running) | unrecorded | (set(expected) - _ids(runs)))
    finals = {r.pk: sum(e.type in ("done", "error") for e in r.events.all()) for r in runs}
    errors = {r.pk: r.result["message"] for r in runs if r.verdict == "error" and r.result}
    return Audit(
        total=len(expected),
        finished=sum(r.finished for r in runs),
        left_running=left_running,
        lost=lost,
        duplicated=[pk for pk, n in finals.items() if n > 1],
        wrong_verdict=[r.pk for r in runs if r.finished and r.verdict not in (expected[r.pk], "error")],
        errors=errors,
        attempts=dict(sorted(Counter(r.attempts for r in runs).items())),
    )


def _ids(runs: Iterable[Submission]) -> set[int]:
    return {r.pk for r in runs}


def wait_for_all(ids: Iterable[int], timeout: float) -> bool:
    """Poll until every run has finished; False at the timeout."""
    deadline = time.monotonic() + timeout
    ids = list(ids)
    while time.monotonic() < deadline:
        if not Submission.objects.filter(pk__in=ids, status__in=("queued", "running")).exists():
            return True
        time.sleep(0.5)
    return False
