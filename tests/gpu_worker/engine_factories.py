"""Factories for engine tests: alice's jobs against the vector-add lab, run on the simulator.

Imported by the test files beside it (`from engine_factories import ...`).
"""

from __future__ import annotations

import itertools
import os
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path

from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import Lab, find_lab
from gpu_worker.protocol import Event, Job, LaunchSpec, Result

_ids = itertools.count(1000)
CORRECT_NUMBA_KERNEL = """
@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


# The events of an accepted run on the simulator, in seq order (a new source's second `compiled`, with the
# SASS, is told after `done`: `engine._EarlyVerdict`).
ACCEPTED_ON_SIM = [
    "started",
    "compiled",
    "occupancy",
    "figure",
    "figure",
    "figure",
    "check",
    "memory",
    "compiled",  # again, with the SASS: disassembling waits until the first report and the run are out
    "figure",
    "done",
]


def vector_add_lab() -> Lab:
    return find_lab("vector-add")


@dataclass
class Run:
    result: Result
    events: list[Event]

    def json(self) -> str:
        return self.result.model_dump_json() + "".join(e.model_dump_json() for e in self.events)


def alices_job(
    source: str,
    language: str = "numba",
    *,
    wall_seconds: float | None = None,
    launch: LaunchSpec | None = None,
    submission_id: int | None = None,
    lab: Lab | None = None,
) -> Job:
    """Alice, a student, submits `source` (dedented) for vector-add, or for `lab`."""
    exercise = (lab or vector_add_lab()).exercise_ref(language)
    if wall_seconds is not None:
        exercise.limits.wall_seconds = wall_seconds
    return Job(
        submission_id=submission_id if submission_id is not None else next(_ids),
        exercise=exercise,
        source=textwrap.dedent(source),
        launch=launch,
        requested_by="alice",
    )


def run(job: Job, *, module_rules: bool | None = None) -> Run:
    """Run `job` on the simulator. A module with hostile code at import (`module_with`) runs with the
    module rules off, so the code reaches the sandbox's walls instead of being refused before it runs."""
    events: list[Event] = []
    if module_rules is None:
        module_rules = not job.source.startswith(HOSTILE_PRELUDE)
    result = run_job(job, events.append, backend="sim", module_rules=module_rules)
    return Run(result, events)


HOSTILE_PRELUDE = "from numba import cuda  # module-level code for the sandbox's walls\n"


def module_with(prelude: str, kernel: str = CORRECT_NUMBA_KERNEL) -> str:
    """A learner's module: `prelude` at import time, then a kernel (by default a correct one).

    `run` runs such a module with the module rules off, so the prelude reaches the sandbox's walls.
    """
    return HOSTILE_PRELUDE + textwrap.dedent(prelude) + "\n" + textwrap.dedent(kernel)


def unique_token() -> str:
    """A number to put in a learner's `sleep` command line, to find their processes afterwards."""
    return str(10_000_000 + uuid.uuid4().int % 80_000_000)


def processes_mentioning(token: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line contains `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token in cmdline and state != "Z":
            found.append(int(entry.name))
    return found
