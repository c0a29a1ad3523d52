"""A fork bomb ends the job within its time limit, and leaves no process behind."""

from __future__ import annotations

import time

from engine_factories import alices_job, module_with, processes_mentioning, run, unique_token


def test_a_fork_bomb_is_stopped_and_leaves_nothing_behind():
    token = unique_token()
    bomb = module_with(f"""
        import os, subprocess
        subprocess.Popen(["sleep", "{token}"])
        while True:
            os.fork()
    """)
    started = time.monotonic()
    result = run(alices_job(bomb, wall_seconds=5)).result
    assert result.verdict in ("runtime_error", "timeout"), result.message
    assert time.monotonic() - started < 5 + 2
    assert processes_mentioning(token) == []
