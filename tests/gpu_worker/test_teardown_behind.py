"""A job left at its final message ends behind its caller (`sandbox.leave_at_final`, the switch
`WARPLAB_TEARDOWN_BEHIND`): the caller has its answer at once, and what must outlive the job waits for its end."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from engine_factories import vector_add_lab

from gpu_worker.isolation import sandbox, tree_cpu
from gpu_worker.protocol import Limits

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def _request() -> dict[str, Any]:
    exercise = vector_add_lab().exercise_ref("numba")
    return {
        "backend": "sim",
        "language": "numba",
        "source": vector_add_lab().references["numba"],
        "entry": "vector_add",
        "args": [a.model_dump() for a in exercise.harness.args_for("numba")],
        "runs": [{"sizes": {"n": 500}, "seed": 1, "grid": [2, 1, 1], "block": [256, 1, 1], "shared_bytes": 0}],
    }


def _sandboxes() -> list[int]:
    """This process's bwrap descendants still alive."""
    table = tree_cpu.processes()
    mine = tree_cpu.descendants(table, os.getpid())
    return [
        pid for pid in mine if Path(f"/proc/{pid}/comm").exists() and "bwrap" in Path(f"/proc/{pid}/comm").read_text()
    ]


def test_a_job_left_at_its_final_message_ends_behind_and_its_waiters_run_after_its_end():
    messages: list[dict[str, Any]] = []
    run = sandbox.run_sandboxed(
        _request(), Limits(wall_seconds=60), "sim", messages.append, final_types=frozenset({"finished"}),
        leave_at_final=True,
    )  # fmt: skip
    assert messages[-1]["type"] == "finished", messages
    assert run.returncode is None and not run.timed_out  # answered at the final message, before the end
    seen: dict[str, list[int]] = {}
    ended = threading.Event()

    def after_the_end() -> None:
        seen["alive"] = _sandboxes()
        ended.set()

    sandbox.when_ended(after_the_end)
    assert ended.wait(20)
    assert seen["alive"] == []  # not one process of the job was left when the waiter ran


def test_without_leaving_the_job_has_ended_when_the_call_returns():
    messages: list[dict[str, Any]] = []
    run = sandbox.run_sandboxed(
        _request(), Limits(wall_seconds=60), "sim", messages.append, final_types=frozenset({"finished"})
    )
    assert messages[-1]["type"] == "finished" and run.returncode == 0
    assert _sandboxes() == []
    done: list[bool] = []
    sandbox.when_ended(lambda: done.append(True))
    assert done == [True]  # nothing left to wait for: at once, on this thread
