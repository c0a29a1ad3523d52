"""A fork bomb ends the job within its time limit, and leaves no process behind."""

from __future__ import annotations

from engine_factories import alices_job, module_with, processes_mentioning, run, unique_token

from gpu_worker.isolation import sandbox

LIMIT_S = 5
# What the engine may take past the limit to kill the bomb and reap its processes, on the sandbox's own clock. Not
# a speed figure (those are benchmarks): a bomb the engine failed to stop would run on to the worker's hard limit.
STOPPING_S = 10


def test_a_fork_bomb_is_stopped_and_leaves_nothing_behind(monkeypatch):
    token = unique_token()
    bomb = module_with(f"""
        import os, subprocess
        subprocess.Popen(["sleep", "{token}"])
        while True:
            os.fork()
    """)
    runs: list[sandbox.SandboxRun] = []  # what the engine's sandbox reported of each run, its own clock's wall time
    real = sandbox.run_sandboxed

    def kept(*args, **kwargs):
        runs.append(real(*args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(sandbox, "run_sandboxed", kept)
    result = run(alices_job(bomb, wall_seconds=LIMIT_S)).result
    assert result.verdict in ("runtime_error", "timeout"), result.message
    assert runs and runs[-1].wall_seconds < LIMIT_S + STOPPING_S, runs[-1].wall_seconds
    assert result.verdict == "runtime_error" or (runs[-1].timed_out and f"{LIMIT_S} s" in result.message)
    assert processes_mentioning(token) == []
