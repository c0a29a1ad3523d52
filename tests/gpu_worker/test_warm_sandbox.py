"""Warm starts: a spare sandbox serves one job exactly as a cold one would, and nothing of it outlives the engine."""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from pathlib import Path

import pytest
from engine_factories import CORRECT_NUMBA_KERNEL, alices_job, module_with, processes_mentioning, run, unique_token

from gpu_worker import engine
from gpu_worker.exercise import plan
from gpu_worker.exercise.labspec import load_all
from gpu_worker.isolation import sandbox, spare, uid_pool

SYNTAX_ERROR = """
@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size
        c[i] = a[i] + b[i]
"""


@pytest.fixture
def spares(monkeypatch):
    """Spares on; every spare handed over recorded (its sandbox's pid); none left afterwards."""
    monkeypatch.setenv(spare.ENV, "1")
    monkeypatch.setattr(spare, "_compiles", spare.collections.deque(maxlen=spare.COMPILER_MEMORY))
    spare.shutdown()
    taken: list[spare.Spare | None] = []
    real_take = spare.POOL.take

    def recording_take(*args, **kwargs):
        found = real_take(*args, **kwargs)
        taken.append(found)
        return found

    monkeypatch.setattr(spare, "take", recording_take)
    yield taken
    spare.shutdown()


def _parents() -> dict[int, int]:
    found = {}
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                found[int(entry.name)] = int(fields[1])
    return found


def _my_spares() -> list[int]:
    """Live spare sandboxes started by this process (another test run on this machine may have its own)."""
    parents = _parents()
    return [pid for pid in processes_mentioning("--spare") if parents.get(pid) == os.getpid()]


def _tree(root: int) -> set[int]:
    """`root` and every live process below it (the spare's sandboxed processes, in their PID namespace)."""
    parents, tree = _parents(), {root}
    while grown := {p for p, parent in parents.items() if parent in tree} - tree:
        tree |= grown
    return tree & set(parents)


def _shape(events):
    return [(e.type, e.model_dump().get("verdict"), e.model_dump().get("passed")) for e in events]


def test_a_warm_job_gets_the_same_verdict_and_events_as_a_cold_one(spares):
    # two sources new to the compile cache: a resubmitted one gets its SASS listing from there, before its
    # verdict instead of after it (`engine._EarlyVerdict`), and the events differ for that reason alone
    cold = run(alices_job(module_with(f"# {unique_token()}")))
    warm = run(alices_job(module_with(f"# {unique_token()}")))
    assert [s is not None for s in spares] == [False, True]
    assert cold.result.sandbox["warm_start"] is False and warm.result.sandbox["warm_start"] is True
    assert cold.result.verdict == warm.result.verdict == "accepted"
    assert _shape(cold.events) == _shape(warm.events)
    assert warm.result.sandbox["uid"] in (65534, *uid_pool.uid_range())


def test_a_warm_compile_error_points_at_line_7(spares):
    run(alices_job(module_with("")))
    result = run(alices_job(module_with("", SYNTAX_ERROR))).result
    assert spares[-1] is not None
    assert result.verdict == "compile_error", result.message
    assert result.compile.diagnostics[0].line == 7


def test_two_warm_jobs_run_in_two_processes_and_the_second_sees_nothing_of_the_first(spares):
    run(alices_job(module_with("")))
    writer = module_with("open('/tmp/left-by-job-one', 'w').write('secret')\nprint('WROTE')")
    reader = module_with("import os\nprint('SEEN' if os.path.exists('/tmp/left-by-job-one') else 'CLEAN')")
    first = run(alices_job(writer)).result
    second = run(alices_job(reader)).result
    one, two = spares[1], spares[2]
    assert one is not None and two is not None and one.pid != two.pid
    assert "WROTE" in first.output and first.verdict == "accepted"
    assert "CLEAN" in second.output and second.verdict == "accepted"


def test_a_hanging_warm_job_is_stopped_at_its_wall_limit_counted_from_the_hand_over(spares, monkeypatch):
    token = unique_token()
    runs: list[sandbox.SandboxRun] = []
    real = sandbox.run_sandboxed
    monkeypatch.setattr(sandbox, "run_sandboxed", lambda *a, **k: runs.append(real(*a, **k)) or runs[-1])
    run(alices_job(module_with(""), wall_seconds=3))  # cold; starts the spare for these limits
    time.sleep(3)  # the spare's imports are done: the hand-over is the start of the clock
    started = time.monotonic()
    # module-level code that never ends (the module rules off): the child hangs importing it
    source = module_with(f'import subprocess\nsubprocess.Popen(["sleep", "{token}"])\nwhile True:\n    pass\n')
    result = run(alices_job(source, wall_seconds=3)).result
    assert spares[-1] is not None
    assert result.verdict == "timeout" and "3 s" in result.message
    assert runs[-1].timed_out and 3 <= runs[-1].wall_seconds < 3 + 2
    assert time.monotonic() - started < 3 + 2
    assert processes_mentioning(token) == []


def test_a_spare_for_other_limits_is_not_used(spares):
    run(alices_job(module_with("")))  # starts a spare with the exercise's own limits
    other = alices_job(module_with(""))
    other.exercise.limits.cpu_seconds = 17  # a limit fixed at a child's start (the wall clock is not)
    result = run(other).result
    assert spares[-1] is None and result.sandbox["warm_start"] is False
    assert result.verdict == "accepted", (result.message, result.output)


def test_a_spare_that_died_while_waiting_is_not_used(spares):
    run(alices_job(module_with("")))
    (waiting,) = spare.POOL.spares.values()
    waiting.started.session.proc.kill()
    waiting.started.session.proc.wait()
    result = run(alices_job(module_with(""))).result
    assert spares[-1] is None
    assert result.verdict == "accepted", (result.message, result.output)


@pytest.mark.parametrize("language", ["cuda", "numba"])
def test_the_spare_started_before_the_first_job_is_the_one_every_labs_gpu_job_takes(spares, language):
    for lab in load_all()[1]:
        assert engine.start_first_spare("cuda")
        limits = lab.exercise_ref(language).limits
        waiting = spare.POOL.take("cuda", limits, engine.GPU_EXTRA_PROCESSES)
        assert waiting is not None, f"{lab.folder.name}'s {language} job would start cold"
        waiting.discard()


def test_a_spare_that_warmed_up_only_in_part_still_serves_and_the_worker_log_says_what_failed(spares, caplog):
    from tests.conftest import _gpu_available

    assert engine.start_first_spare("cuda")
    waiting = spare.POOL.take("cuda", load_all()[1][0].exercise_ref("cuda").limits, engine.GPU_EXTRA_PROCESSES)
    assert waiting is not None
    waiting.discard()
    warned = [r.getMessage() for r in caplog.records if "warmed up only in part" in r.getMessage()]
    if _gpu_available():
        assert warned == []  # on a GPU every part of the warm-up works (Numba's compiler included)
    else:
        assert len(warned) == 1 and "Error" in warned[0], warned  # no CUDA here: CuPy's context fails


def _sim_key(lab, language: str) -> spare.Key:
    job = alices_job("", language, lab=lab)
    return spare.key_of("sim", job.exercise.limits, engine._extra_processes("sim", plan.runs(job, "sim")))


def test_the_sim_spare_started_before_the_first_job_fits_most_labs_and_vector_add(spares):
    keys = Counter(_sim_key(lab, "numba") for lab in load_all()[1] if "numba" in lab.references)
    assert engine.start_first_spare("sim")
    (started,) = spare.POOL.spares
    assert started == keys.most_common(1)[0][0], "USUAL_SIM_BLOCK is no longer most labs' block size"
    vector_add = next(lab for lab in load_all()[1] if lab.folder.name == "vector-add")
    assert started == _sim_key(vector_add, "numba")
    spare.shutdown()


def test_no_spare_is_started_before_the_first_job_with_spares_off(spares, monkeypatch):
    monkeypatch.setenv(spare.ENV, "0")
    assert engine.start_first_spare("sim") is False
    assert engine.start_first_spare("cuda") is False
    assert spare.POOL.spares == {} and _my_spares() == []


def test_with_spares_switched_off_none_is_started(monkeypatch):
    monkeypatch.setenv(spare.ENV, "0")
    spare.shutdown()
    run(alices_job(module_with("")))
    assert spare.POOL.spares == {}
    assert _my_spares() == []


def test_after_the_engines_cleanup_no_spare_process_remains(spares):
    run(alices_job(module_with("", CORRECT_NUMBA_KERNEL)))
    (waiting,) = spare.POOL.spares.values()
    assert waiting.wait_ready(30) and _my_spares() == [waiting.pid]
    sandboxed = _tree(waiting.pid)
    assert len(sandboxed) >= 2  # bwrap and the warm Python inside it
    spare.shutdown()
    assert spare.POOL.spares == {} and waiting.started.session.proc.poll() is not None
    assert _my_spares() == [] and sandboxed & set(_parents()) == set()


def test_a_warm_job_gets_its_own_cpu_seconds_from_the_hand_over(spares):
    def job(source: str):
        made = alices_job(source, wall_seconds=20)
        made.exercise.limits.cpu_seconds = 3
        return made

    run(job(module_with("")))  # cold; starts the spare for these limits
    report = """
    import resource
    used = resource.getrusage(resource.RUSAGE_SELF)
    print("LEFT", resource.getrlimit(resource.RLIMIT_CPU)[0] - (used.ru_utime + used.ru_stime))
    """
    told = run(job(module_with(report))).result
    left = float(next(line for line in told.output.splitlines() if line.startswith("LEFT")).split()[1])
    assert spares[-1] is not None and 2.0 <= left <= 4.0  # 3 s and a rounding, not 3 s plus the allowance
    started = time.monotonic()
    hog = run(job(module_with("while True:\n    pass"))).result
    assert spares[-1] is not None
    # killed by its 3 CPU seconds, long before the 20 s wall limit; the verdict is the cold path's own
    # (RLIMIT_CPU soft = hard: the kernel's SIGKILL reads as a runtime_error there too)
    assert hog.verdict in ("timeout", "runtime_error") and time.monotonic() - started < 10


def _told_no_compiler(spare_pid: int) -> bool:
    """Whether the spare's warm-up was told to start no compile process (its child's arguments say so)."""
    return any(pid in _tree(spare_pid) for pid in processes_mentioning(" no-compiler"))


def test_a_worker_whose_jobs_compiled_nothing_warms_no_compiler_and_its_next_numba_job_compiles_cold(spares):
    for _ in range(spare.COMPILER_MEMORY):
        spare.note_compile(False)  # CUDA C++ jobs, or sources the compile cache held
    assert engine.start_first_spare("sim")
    (waiting,) = spare.POOL.spares.values()
    assert _told_no_compiler(waiting.pid)  # no CPU spent warming a compiler nobody would use
    result = run(alices_job(module_with("", CORRECT_NUMBA_KERNEL))).result
    assert spares[-1] is not None and spares[-1].pid == waiting.pid
    assert result.verdict == "accepted", (result.message, result.output)  # its own compile process, started cold
    (following,) = spare.POOL.spares.values()  # that job compiled: the next spare warms one again
    assert not _told_no_compiler(following.pid)


@pytest.mark.parametrize(
    ("rule", "history", "warm"),
    [
        ("auto", [], True),  # a worker's first jobs: warm, as before the rule
        ("auto", [False] * 8, False),
        ("auto", [False] * 7 + [True], True),
        ("auto", [True] + [False] * 8, False),  # the compile fell out of the last 8
        ("always", [False] * 8, True),
        ("never", [True] * 8, False),
    ],
)
def test_whether_the_next_spare_warms_a_compiler(monkeypatch, rule, history, warm):
    monkeypatch.setenv(spare.COMPILER_ENV, rule)
    monkeypatch.setattr(spare, "_compiles", spare.collections.deque(maxlen=spare.COMPILER_MEMORY))
    for needed in history:
        spare.note_compile(needed)
    assert spare.wants_compiler() is warm


def test_a_warm_jobs_warm_up_is_counted_whole_by_step_and_no_more_than_its_sandboxs_count(spares):
    from gpu_worker.isolation.child import OUTSIDE_STEP, STARTED_STEP

    run(alices_job(module_with("")))
    warm = run(alices_job(module_with(f"# {unique_token()}"))).result
    steps = warm.sandbox["warm_up_steps_cpu_s"]
    assert {STARTED_STEP, "engine imports", "backend imports", OUTSIDE_STEP} <= set(steps), steps
    assert steps[STARTED_STEP] > 0  # an interpreter's start is never free
    # the steps are the spare's own process's whole count: never more than its sandbox's tree at the hand-over
    tree = warm.sandbox.get("warm_up_cpu_seconds")
    assert tree is None or sum(steps.values()) <= tree + 0.05, (steps, tree)
