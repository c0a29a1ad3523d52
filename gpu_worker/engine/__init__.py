"""Run one job: reject what cannot run, sandbox the rest, check its outputs, stream events, return the result.

`run_job` is the whole execution service seen from outside: the Celery task
and the command line both call it. The engine itself never runs the learner's
code, not even to compile it; it regenerates the inputs, computes the expected
outputs and judges what the sandboxed child sent back.

Events carry increasing sequence numbers starting at 2 (the web emits
`queued` as 0 and 1): `started`, then `compiled` or `compile_error` (with the
occupancy graphs from the compiled resources, before the kernel runs), then one
`check` per size and output, a second `compiled` with the SASS (the PTX too on a
GPU: listings are made after the run, so they delay no figure), then `done` with
the verdict, or `error` when the failure is ours (infrastructure), not the learner's.
On the CPU tier a new source's second `compiled` is told after `done`, numbered
before it: the verdict does not wait for nvdisasm (`_EarlyVerdict`).

A job runs in three phases, any of which may end it: `_start` (the device, the
precheck, the runs of `exercise.plan`, the sandbox's description, `started`),
`_run` (the sandboxed child, its messages judged as they arrive by `judge.Judge`) and
`_report` (the verdict, the figures, the goals). Every job ends the one way the
scheduling runner's do too, `protocol.Outcome.finish`: the result held to its
size limit, then the final event, and nothing after it.

The package: this module (the three phases, spares, profiles) and `judge` (the child's messages turned into
events, checks and the verdict). May import: `gpu_worker.profiling`, `gpu_worker.isolation`, `gpu_worker.answers`,
`gpu_worker.datacenter`, `gpu_worker.figures` and what lies below isolation (`backends`, `ptx`,
`measurement`, `science`, `exercise`, `protocol`, `settings`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpu_worker import profiling
from gpu_worker.backends import compile_cache, device_name, nvcc, rehearsal
from gpu_worker.engine.judge import Judge, Malformed, verdict_of
from gpu_worker.exercise import goals, plan
from gpu_worker.exercise.inputs import job_seed
from gpu_worker.exercise.launch import LaunchRejected
from gpu_worker.exercise.plan import is_sweep
from gpu_worker.figures import analysis
from gpu_worker.figures.sweep import block_sweep_figure, sweep_figure
from gpu_worker.isolation import sandbox, spare, uid_pool
from gpu_worker.isolation.message_budget import OverBudget, max_message_bytes
from gpu_worker.isolation.wire import WireError, WireOverflow
from gpu_worker.measurement.gpu_lock import open_worker_lock_fd
from gpu_worker.measurement.gpu_report import GpuReport, load_ceilings
from gpu_worker.protocol import (
    Event,
    Job,
    Limits,
    Outcome,
    Result,
)

FINAL_TYPES = frozenset({"finished", "not_run", "compile_error", "rejected", "runtime_error", "timeout", "error"})
GPU_EXTRA_PROCESSES = 32  # a cuda child's own threads (CUDA's, NVRTC's, Numba's) beyond the job's process limit
Emit = Callable[[Event], None]


def run_job(
    job: Job,
    emit: Emit,
    backend: str = "sim",
    *,
    module_rules: bool = True,
    on_result: Callable[[Result], None] | None = None,
) -> Result:
    """Run one job to its verdict, emitting events along the way; never raises for the learner's faults.

    `on_result` is handed the result as soon as its final event is sent (a worker reports it there), at the
    child's final message (`_EarlyVerdict`): on a GPU before the child's CUDA context is torn down, on the
    CPU tier before the SASS listing, which follows as a late `compiled` event numbered before `done`; the
    returned result has the listing too, and what the sandbox counted once the child ended.

    A root worker leases the job's uid first (`isolation.uid_pool`): the job runs as it and the result names it.
    `module_rules=False` lets a CUDA Python module run code at import (`backends.module_rules` off): only
    the sandbox's tests ask for it, to put hostile code in front of the sandbox's walls.
    """
    if job.exercise.language == "policy":  # a scheduling policy, not a kernel: gpu_worker.datacenter
        from gpu_worker.datacenter.runner import run_policy_job

        return run_policy_job(job, emit, backend)  # its sandbox leases the job's uid itself
    if job.exercise.language == "function":  # a plain Python function judged by its answers: gpu_worker.answers
        from gpu_worker.answers.runner import run_function_job

        return run_function_job(job, emit, backend)
    lease = None
    if os.geteuid() == 0:
        try:
            lease = uid_pool.lease()
        except (uid_pool.NoFreeUid, OSError) as exc:
            outcome = Outcome(job.submission_id, emit, job.backend or backend, on_result=on_result)
            outcome.send("started", backend=outcome.backend, worker=_worker(backend))
            return outcome.finish("error", f"the worker cannot start another job now: {exc}", elapsed_seconds=None)
    try:
        return _run_job(job, emit, backend, lease.uid if lease is not None else None, module_rules, on_result)
    finally:
        if lease is not None:
            sandbox.when_ended(lease.release)  # the uid is the job's until its last process is gone


def _run_job(
    job: Job,
    emit: Emit,
    backend: str,
    uid: int | None,
    module_rules: bool = True,
    on_result: Callable[[Result], None] | None = None,
) -> Result:
    """A job in three phases, each of which may end it: start (or reject), run the child, report the verdict."""
    outcome = Outcome(job.submission_id, emit, job.backend or backend, on_result=on_result)
    start = _start(job, outcome, uid)
    if isinstance(start, Result):
        return start
    ran = _run(job, outcome, start, uid, module_rules)
    if isinstance(ran, Result):
        return ran
    if ran.late is not None and ran.late.result is not None:  # told at the child's final message, before it ended
        return ran.late.end()
    return _report(job, outcome, ran)


@dataclass
class _Started:
    """What the start phase settled: one run per size (and sweep point), and the child's extra processes."""

    runs: list[dict[str, Any]]
    extra: int


@dataclass
class _Ran:
    """What the run phase leaves for the report: the judge (its state) and the sandbox's run (None: malformed)."""

    judge: Judge
    run: sandbox.SandboxRun | None
    malformed: str  # why the engine stopped reading the child, when `run` is None
    late: _EarlyVerdict | None = None  # the verdict told at the child's final message, before it ended


LATE_GRACE_S = 3.0  # after the verdict, how long the child has to send the SASS listing and end


class _EarlyVerdict:
    """The verdict at the child's final message, before the child has ended: what follows cannot change it.

    The CPU tier's verdict before its SASS listing: nvdisasm (0.3 s of CPU) takes longer than the launches.
    The child sends `finished` first (`listing_after_verdict`); at that message the verdict is reported
    (`done`, and the result to `on_result`) while the sandbox waits for the listing, which is told as a late
    `compiled` event numbered before `done` (a listing that never comes is told as a note in its place, so the
    story stays whole). bench/results/2026-12-06-cpu-tier-verdict-latency.md has the numbers.

    On a GPU the child's last message comes after its listing; what it does after it is end, and the end of a
    process with a CUDA context (the driver tearing the context down) took 60 ms on a quiet H100 and longer
    under a class's load: the verdict no longer waits for it.
    """

    def __init__(self, job: Job, outcome: Outcome, judge: Judge) -> None:
        self.job, self.outcome, self.judge = job, outcome, judge
        self.result: Result | None = None
        self.seq: int | None = None

    def report(self, run: sandbox.SandboxRun) -> None:
        """At the child's final message: the verdict, with the output written before it."""
        state = self.judge.state
        if state.finished and state.listing_follows and state.compile is not None:
            self.seq = self.outcome.reserve()
        _note_sandbox(self.outcome, self.judge, run)
        self.result = _report(self.job, self.outcome, _Ran(self.judge, run, ""))
        self.judge.send = self.send  # what the judge tells from now on: only the listing, in its place

    def send(self, kind: str, **facts: Any) -> None:
        if kind == "compiled" and self.seq is not None:
            seq, self.seq = self.seq, None
            self.outcome.send_reserved(seq, kind, **facts)

    def end(self) -> Result:
        """The job's result as reported, with the listing that came after it (or the note of why none did)."""
        state, result = self.judge.state, self.result
        assert result is not None
        if self.seq is not None and state.compile is not None:
            state.compile.notes.append("no SASS listing: the job ended before it came")
            self.send("compiled", **state.compile.model_dump())
        result.compile = state.compile
        result.sandbox = self.outcome.sandbox
        return result


def _start(job: Job, outcome: Outcome, uid: int | None) -> _Started | Result:
    """The job's device, its precheck, its runs and its sandbox; the `started` event. Ends the job if it cannot run."""
    backend = outcome.backend
    try:
        outcome.device = device_name(backend)  # on sim: the PTX executor, whose outputs and memory report these are
    except (ImportError, ValueError) as exc:
        outcome.send("started", backend=backend, device=outcome.device, worker=_worker(backend))
        return outcome.finish("error", f"the {backend} backend is not available on this worker: {exc}")
    runs: list[dict[str, Any]] = []
    rejection = plan.precheck(job)
    if rejection is None:
        try:
            runs = plan.runs(job, backend)
        except LaunchRejected as exc:
            rejection = f"launch rejected: {exc}"
    extra = _extra_processes(backend, runs)
    try:
        outcome.sandbox = sandbox.describe(backend, job.exercise.limits, extra, uid=uid)
    except RuntimeError as exc:
        outcome.send("started", backend=backend, device=outcome.device, worker=_worker(backend))
        return outcome.finish("error", str(exc))
    outcome.send("started", backend=backend, device=outcome.device, worker=_worker(backend), sandbox=outcome.sandbox)
    if rejection:
        return outcome.finish("rejected", rejection)
    if (no_sweep := plan.sweep_refusal(job, backend)) is not None:
        outcome.send("log", message=no_sweep)
    return _Started(runs, extra)


def _run(job: Job, outcome: Outcome, start: _Started, uid: int | None, module_rules: bool) -> _Ran | Result:
    """The sandboxed child, its messages judged as they arrive; on a GPU, timed under the per-GPU lock."""
    backend, limits, runs = outcome.backend, job.exercise.limits, start.runs
    request = _request(job, backend, runs, module_rules)
    judge = Judge(job, runs, outcome.send, analysis.source_label(backend, outcome.device, job.exercise.language))
    if backend == "cuda":  # GPU measurements: occupancy and timing per size, under the per-GPU lock
        _measure_on_device(job, judge, request, outcome.device)
    elif backend == "sim":
        _listing_kept(job, judge, request, outcome.device)
    if backend == "sim" and "cached" not in request:  # a new source: its verdict goes before its listing
        request["listing_after_verdict"] = True
    # on a GPU the verdict goes before the child's CUDA context is torn down
    told_early = backend == "cuda" or request.get("listing_after_verdict")
    late = _EarlyVerdict(job, outcome, judge) if told_early else None
    spare.note_compile(job.exercise.language == "numba" and not (request.get("cached") or {}).get("answer"))
    # a spare child already warm, or None: a cold start; the next spare rehearses this lab's check (on a GPU)
    warm = _take_spare(backend, limits, start.extra, _rehearsal(job, backend, runs))
    if spare.enabled():
        outcome.sandbox = {**outcome.sandbox, "warm_start": warm is not None}
    lock_fd = None
    if backend == "cuda":
        lock_fd = open_worker_lock_fd() if warm is None else None  # a spare holds its own, inherited at its start
        request["gpu_lock_fd"] = lock_fd if warm is None else warm.lock_fd
    malformed = ""
    try:
        run = sandbox.run_sandboxed(
            request,
            limits,
            backend,
            judge,
            extra_processes=start.extra,
            final_types=FINAL_TYPES,
            inherit_fds=(lock_fd,) if lock_fd is not None else (),
            max_message_bytes=max_message_bytes(judge.args, runs),
            spare=warm.started if warm is not None else None,
            uid=uid,
            on_final=late.report if late is not None else None,
            grace_seconds=LATE_GRACE_S if request.get("listing_after_verdict") else sandbox.FINAL_GRACE_S,
            # told at its final message with nothing to follow: the child may end behind the worker's back
            leave_at_final=late is not None and not request.get("listing_after_verdict") and sandbox.teardown_behind(),
        )
    except (OverBudget, WireOverflow) as exc:
        malformed = f"{exc}; the engine stopped reading it"
        run = None
    except (Malformed, WireError) as exc:
        malformed = f"the job's messages were malformed ({exc}); did your code write to the engine's pipe?"
        run = None
    except Exception as exc:  # ours: the sandbox or the checker failed
        if late is None or late.result is None:
            return outcome.finish("error", f"the worker failed to run the job: {type(exc).__name__}: {exc}")
        run = None  # after the verdict was reported: the listing is what is lost
    finally:
        if lock_fd is not None:
            os.close(lock_fd)
        if warm is not None:
            warm.release()
    state = judge.state
    if judge.kept and state.compile is not None and state.verdict not in ("compile_error", "rejected"):
        compile_cache.store(judge.compile_key, judge.kept)
    if run is not None:
        _note_sandbox(outcome, judge, run)
    return _Ran(judge, run, malformed, late)


SANDBOX_FACTS = ("uid", "memory_peak_mb", "cpu_seconds", "cpu_counted_by", "warm_up_cpu_seconds")


def _note_sandbox(outcome: Outcome, judge: Judge, run: sandbox.SandboxRun) -> None:
    """What the sandbox itself knows of the job into its result: its uid, its peak memory and CPU seconds (so far
    at its final message, all of them once it has ended); and the spare's word on its warm-up's steps (`hello`),
    a benchmark's breakdown that nothing is judged by."""
    outcome.sandbox = {**outcome.sandbox, **{k: run.info[k] for k in SANDBOX_FACTS if k in run.info}}
    if judge.warm_up_cpu_s:
        outcome.sandbox["warm_up_steps_cpu_s"] = judge.warm_up_cpu_s


def _measure_on_device(job: Job, judge: Judge, request: dict[str, Any], device: str) -> None:
    """The cuda child checks and times on the device, and its process never imports learner code: trust its word."""
    judge.gpu = GpuReport(job, judge.runs, judge.send, judge.state.checks, load_ceilings())
    request["measure"] = True
    harness = job.exercise.harness
    request["check"] = {"expected": harness.expected, "tolerance": harness.tolerance.model_dump()}
    judge.trusts_checks = True
    judge.trusts_compile_facts = True
    judge.compile_key = compile_cache.key(job, device)  # compile once per source, toolchain and GPU
    if kept := compile_cache.load(judge.compile_key):
        request["cached"] = kept
    for index, r in enumerate(judge.runs):  # the timed launches' own inputs, never the checked launch's
        r["timed_seeds"] = [job_seed(harness.seed, job.submission_id, 1000 + 2 * index + k) for k in range(2)]


def _listing_kept(job: Job, judge: Judge, request: dict[str, Any], device: str) -> None:
    """On the CPU tier, this source's SASS listing as an earlier job left it (`compile_cache`), or a key to keep it.

    The listing is the one thing the verdict waited for after the run: nvdisasm takes 0.3 s of CPU even for
    vector-add, and on the tier's 2 shared cores it came 0.5 to 1 s after the outputs were judged
    (bench/results/2026-12-06-cpu-tier-verdict-latency.md). A resubmitted source (the starter, a restored
    draft, a resubmission after reading the verdict) gets the listing its first run made, at once.
    """
    judge.compile_key = compile_cache.key(job, f"{device}; nvcc {_nvcc_release()}")  # the key's toolchain is pip's
    judge.keeps_listing = True
    if listing := compile_cache.load(judge.compile_key).get("listing"):
        request["cached"] = {"listing": listing}


@functools.cache
def _nvcc_release() -> str:
    return nvcc.version()


def _report(job: Job, outcome: Outcome, ran: _Ran) -> Result:
    """The verdict, the figures beside it, the goals judged: the job's result and its final event."""
    judge, run, state, runs = ran.judge, ran.run, ran.judge.state, ran.judge.runs
    if run is None:
        verdict, message = "runtime_error", ran.malformed
        output, truncated = "", False
    else:
        verdict, message = verdict_of(state, run, runs, job.exercise.limits.wall_seconds)
        output, truncated = run.output, run.output_truncated
    failing = next((c for c in state.checks if not c.passed), None)
    gpu_fields = judge.gpu.result_fields() if judge.gpu is not None else {}
    _figures(job, judge, verdict, outcome.device)
    if state.occupancy is not None:
        gpu_fields["occupancy"] = {**(gpu_fields.get("occupancy") or {}), "calculator": state.occupancy}
    judged = goals.judge(
        job.exercise.harness.goals,
        outcome.backend,
        verdict,
        memory=state.memory,
        metrics=gpu_fields.get("metrics"),
        occupancy=state.occupancy,
        work=job.exercise.harness.work,
        sizes=runs[0]["sizes"] if runs else None,
    )
    executed_by = None
    if verdict not in ("compile_error", "rejected", "error") and state.compile is not None:
        executed_by = "gpu" if outcome.backend == "cuda" else state.executed_by
    return outcome.finish(
        verdict,
        goals.message(message, judged),
        executed_by=executed_by,
        **goals.result_fields(judged),
        compile=state.compile,
        checks=state.checks,
        check=failing or (state.checks[-1] if state.checks else None),
        diagnostics=state.diagnostics if verdict != "compile_error" else [],
        output=output,
        output_truncated=truncated,
        memory=state.memory,
        figures=state.figures,
        **gpu_fields,
    )


def _figures(job: Job, judge: Judge, verdict: str, device: str) -> None:
    """The figures drawn after the run: the roofline, and on a GPU the exercise's sweep and the learner's."""
    gpu = judge.gpu
    if verdict in ("accepted", "wrong_answer", "not_run"):
        judge.figure(
            analysis.roofline(
                job.exercise.harness.work,
                [r["sizes"] for r in judge.runs if not is_sweep(r)],
                gpu.metrics if gpu is not None else {},
                gpu.ceilings if gpu is not None else None,
                device,
                judge.label,
                job.history,
                job.reference,
            )
        )
    if verdict != "accepted" or gpu is None:
        return
    sweep = job.exercise.harness.sweep
    if sweep is not None:  # the sizes are the sweep's points
        curve = sweep_figure(sweep, gpu.metrics, judge.label, gpu.occupancies)
        if curve is not None:
            judge.figure(curve)
    if gpu.sweep_metrics:
        chosen = max(gpu.metrics, default=None)  # the largest size: the sweep's
        curve = block_sweep_figure(gpu.block_sweep(chosen), judge.state.sweep_error, judge.label)
        if curve is not None:
            judge.figure(curve)


def _request(job: Job, backend: str, runs: list[dict[str, Any]], module_rules: bool = True) -> dict[str, Any]:
    """The child's request: the learner's source, the exercise's arguments and one launch per size."""
    for r in runs:
        r.pop("threads_per_block", None)
    return {
        "backend": backend,
        "language": job.exercise.language,
        "source": job.source,
        "entry": job.exercise.entry,
        "args": [a.model_dump() for a in job.exercise.harness.args_for(job.exercise.language)],
        "runs": runs,
        "module_rules": module_rules,
        **_triton_options(job),
    }


def _triton_options(job: Job) -> dict[str, Any]:
    """`{"triton": {constexprs, num_warps, num_stages}}` for a Triton job: what the compile process compiles in."""
    triton = job.exercise.harness.triton
    if job.exercise.language != "triton" or triton is None:
        return {}
    return {"triton": triton.model_dump(include={"constexprs", "num_warps", "num_stages"})}


PROFILE_FIRST_SEQ = 10_000  # a profile's events follow the run's, whatever their count


def run_profile(job: Job, emit: Emit, backend: str = "cuda", *, for_goals: bool = False) -> dict[str, Any] | None:
    """Nsight Compute for a run already judged, on the profile lane: never on any learner's verdict path.

    The kernel is compiled again and launched once under ncu in its own sandboxed child
    (`gpu_worker.profiling`); emits one `profile` event and returns its facts (None off a GPU).
    `for_goals`: only the memory-access goals' counters, at the size the goals are judged on (check-labs).
    """
    counter = itertools.count(PROFILE_FIRST_SEQ)

    def send(kind: str, **fields: Any) -> None:
        emit(Event.of(kind, next(counter), **fields))

    try:
        runs = [r for r in plan.runs(job, backend) if not is_sweep(r)]  # the profile is of the graded launch
    except LaunchRejected as exc:
        facts = profiling.unavailable(f"launch rejected: {exc}")
        send("profile", **facts)
        return facts
    request = _request(job, backend, runs)
    if for_goals:
        return profiling.profile_goals(job, runs, request, send, device=device_name(backend), backend=backend)
    return profiling.profile_job(job, runs, request, job.exercise.limits, send, device=device_name(backend))


def _extra_processes(backend: str, runs: list[dict[str, Any]]) -> int:
    """Processes a child may start beyond the job's limit: the simulator runs a thread per GPU thread."""
    if backend == "sim":
        return max((r["threads_per_block"] for r in runs), default=0) + GPU_EXTRA_PROCESSES
    return GPU_EXTRA_PROCESSES


def start_first_spare(backend: str) -> bool:
    """Before the first job: start the spare for a job of the default limits (every lab's), if spares are on.

    A sim spare's key holds the job's block size (the simulator runs a thread per GPU thread, and the
    process limit counts them): the first one is started for `USUAL_SIM_BLOCK` threads, most labs' default
    launch, so the first job of those pays no imports; another block size starts cold, as before.
    Returns whether one was started; a failure leaves the first job to start cold.
    """
    if backend not in ("cuda", "sim") or not spare.enabled():
        return False
    runs = [{"threads_per_block": USUAL_SIM_BLOCK}] if backend == "sim" else []
    try:
        spare.refill(backend, Limits(), _extra_processes(backend, runs))
    except Exception:
        return False
    return True


USUAL_SIM_BLOCK = 256  # threads per block of most labs' default launch (a test holds it to the lab content)


def _take_spare(backend: str, limits: Limits, extra: int, rehearsal: str | None = None) -> spare.Spare | None:
    """The ready spare for this job (see `gpu_worker.isolation.spare`), and the next one started (rehearsing
    `rehearsal` while it waits); None: start cold."""
    if not spare.enabled():
        return None
    warm = spare.take(backend, limits, extra)
    with contextlib.suppress(Exception):  # without a next spare the next job starts cold, as without spares
        spare.refill(backend, limits, extra, rehearsal)  # starts while this job runs: only a fork and exec here
    return warm


def _rehearsal(job: Job, backend: str, runs: list[dict[str, Any]]) -> str | None:
    """What the next spare rehearses on a GPU: this job's lab check at its sizes (never its source)."""
    if backend != "cuda" or not spare.rehearses():
        return None
    return rehearsal.describe(job.exercise.harness, job.exercise.language, runs)


def _worker(backend: str) -> str:
    return f"{socket.gethostname()}:{os.getpid()} ({backend})"
