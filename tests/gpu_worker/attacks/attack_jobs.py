"""Run many attack jobs at once, each in a worker process of its own, as a Celery pool would.

Every job costs a sandbox start (about 1.5 s of imports on the simulator), so
the suite runs its jobs in `WORKERS` spawned processes side by side (spawned,
not forked: each is a fresh interpreter, like a prefork pool child) and the
tests only read the results. Two jobs of one phase run at the same time, as
two students' jobs on one host do. The module rules (`backends.module_rules`,
the first wall: a CUDA Python file runs nothing at import) are off for these
jobs, so each attack meets the sandbox itself.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from gpu_worker.protocol import Event, Job, Result

WORKERS = 4
HERE = Path(__file__).resolve().parent


@dataclass
class Outcome:
    result: Result
    events: list[Event]

    def json(self) -> str:
        return self.result.model_dump_json() + "".join(e.model_dump_json() for e in self.events)


def _in_worker(job_json: str) -> tuple[str, list[str]]:
    sys.path.insert(0, str(HERE.parent))
    from gpu_worker.engine import run_job

    events: list[Event] = []
    # the module rules off: the attack's module-level code runs, to test the sandbox's walls behind them
    result = run_job(Job.model_validate_json(job_json), events.append, backend="sim", module_rules=False)
    return result.model_dump_json(), [e.model_dump_json() for e in events]


_pool: concurrent.futures.ProcessPoolExecutor | None = None


def pool() -> concurrent.futures.ProcessPoolExecutor:
    global _pool
    if _pool is None:
        _pool = concurrent.futures.ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"))
    return _pool


def run_all(jobs: dict[str, Job]) -> dict[str, Outcome]:
    """Run `jobs` side by side; their outcomes by name."""
    futures = {name: pool().submit(_in_worker, job.model_dump_json()) for name, job in jobs.items()}
    outcomes = {}
    for name, future in futures.items():
        result, events = future.result(timeout=180)
        outcomes[name] = Outcome(Result.model_validate_json(result), [Event.model_validate_json(e) for e in events])
    return outcomes


def dedent(source: str) -> str:
    return textwrap.dedent(source).strip("\n") + "\n"
