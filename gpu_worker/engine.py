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
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from gpu_worker import profiling
from gpu_worker.backends import compile_cache, device_name, ptxas
from gpu_worker.exercise import checker, goals
from gpu_worker.exercise.formula import FormulaError, array_value
from gpu_worker.exercise.inputs import input_arrays, job_seed, shape_of
from gpu_worker.exercise.launch import LaunchRejected, resolve_launch
from gpu_worker.figures import analysis
from gpu_worker.figures.sweep import block_sweep_figure, sweep_figure
from gpu_worker.isolation import sandbox, spare, uid_pool, wire
from gpu_worker.isolation.message_budget import RESULT_BYTES, Budget, OverBudget
from gpu_worker.isolation.wire import WireError, WireOverflow
from gpu_worker.measurement.gpu_lock import open_worker_lock_fd
from gpu_worker.measurement.gpu_report import GpuReport, load_ceilings
from gpu_worker.protocol import MAX_SOURCE_BYTES, CheckInfo, CompileInfo, Diagnostic, Event, Job, Limits, Result

FIRST_SEQ = 2
FINAL_TYPES = frozenset({"finished", "not_run", "compile_error", "rejected", "runtime_error", "error"})
GPU_EXTRA_PROCESSES = 32  # a cuda child's own threads (CUDA's, NVRTC's, Numba's) beyond the job's process limit
Emit = Callable[[Event], None]
# Who made the PTX that the engine assembles on the sim backend, by language (the engine's own words).
COMPILERS = {
    "numba": "numba-cuda (NVVM)",
    "triton": "Triton (compiled for sm_90) + Triton interpreter (CPU)",
    "cuda": "nvcc",
}


class _Malformed(Exception):
    """The child sent a message that does not fit the job (a bug, or the learner writing to our pipe)."""


@dataclass
class _State:
    """What the child has told us so far."""

    compile: CompileInfo | None = None
    verdict: str | None = None
    message: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    checks: list[CheckInfo] = field(default_factory=list)
    outputs_seen: set[int] = field(default_factory=set)
    timed_seen: set[int] = field(default_factory=set)  # sizes whose timed launches were checked
    finished: bool = False
    infra_error: str = ""
    occupancy: dict[str, Any] | None = None  # the calculator's, from the compiled resources
    sweep_error: str = ""  # the runtime error that ended the learner's block-size sweep
    memory: dict[str, Any] | None = None  # the simulator's coalescing and bank-conflict analysis
    figures: list[dict[str, Any]] = field(default_factory=list)


def _entry_present(language: str, source: str, entry: str) -> bool:
    name = re.escape(entry)
    if language in ("numba", "triton"):
        return re.search(rf"^\s*def\s+{name}\s*\(", source, re.MULTILINE) is not None
    return re.search(rf"\b{name}\s*\(", source) is not None


def _precheck(job: Job) -> str | None:
    """Why this job must be rejected before anything runs, or None."""
    exercise = job.exercise
    if not job.source.strip():
        return "your file is empty"
    size = len(job.source.encode("utf-8", errors="replace"))
    if size > MAX_SOURCE_BYTES:
        return f"your file is {size} bytes, over the limit of {MAX_SOURCE_BYTES} bytes"
    if not _entry_present(exercise.language, job.source, exercise.entry):
        kind = "def" if exercise.language in ("numba", "triton") else 'extern "C" __global__ void'
        return f"no kernel named {exercise.entry!r} in your file (expected `{kind} {exercise.entry}(...)`)"
    return None


def _runs(job: Job, backend: str) -> list[dict[str, Any]]:
    """One launch per size of this backend; LaunchRejected if any is over the device's limits."""
    harness = job.exercise.harness
    size_sets = harness.sizes.get(backend)  # type: ignore[call-overload]
    if not size_sets:
        raise LaunchRejected(f"this exercise has no sizes for the {backend} backend")
    language = job.exercise.language
    if language == "triton" and harness.triton is None:
        raise LaunchRejected("this exercise does not say how to launch a Triton kernel (its lab.yaml has no 'triton')")
    # A learner's chosen block size is a CUDA launch; a Triton kernel's block is its num_warps.
    spec = harness.launch_for(language) if language == "triton" else job.launch or harness.launch
    runs = []
    for index, sizes in enumerate(size_sets):
        config = resolve_launch(spec, sizes)
        seed = job_seed(harness.seed, job.submission_id, index)
        runs.append({"sizes": sizes, "seed": seed, **config.as_dict(), "threads_per_block": config.threads_per_block})
    return runs + _sweep_runs(job, backend, runs[-1])


SWEEP_GPU_BUDGET_S = 0.1  # a sweep point's timing budget: a curve needs less precision than a graded time


def _sweep_runs(job: Job, backend: str, largest: dict[str, Any]) -> list[dict[str, Any]]:
    """The learner's block-size sweep: one more run per other block size they asked for, at the largest size.

    GPU only (a curve of simulated threads would time nothing). Each point is checked and timed like a size,
    but judged apart (`sweep_block` marks it): its checks and numbers draw the curve, never the verdict.
    """
    choices = job.exercise.harness.launch_choices
    wanted = job.launch.sweep_blocks if job.launch is not None else []
    if backend != "cuda" or not wanted or choices is None or job.exercise.language == "triton":
        return []
    runs = []
    for k, block in enumerate(dict.fromkeys(wanted)):
        if block == largest["threads_per_block"]:
            continue
        try:
            config = resolve_launch(choices.launch(block), largest["sizes"])
        except (ValueError, LaunchRejected):
            continue  # a block size the exercise does not offer, or over this device's limits: off the curve
        seed = job_seed(job.exercise.harness.seed, job.submission_id, 500 + k)
        runs.append(
            {
                "sizes": largest["sizes"],
                "seed": seed,
                **config.as_dict(),
                "threads_per_block": config.threads_per_block,
                "sweep_block": block,
                "gpu_budget_s": SWEEP_GPU_BUDGET_S,
            }
        )
    return runs


def is_sweep(run: dict[str, Any]) -> bool:
    """Whether this run is a point of the learner's block-size sweep, not one of the exercise's sizes."""
    return "sweep_block" in run


class _Judge:
    """Turns the child's messages into events and checks, as they arrive."""

    def __init__(self, job: Job, runs: list[dict[str, Any]], send: Callable[..., None], label: str = ""):
        self.job = job
        self.label = label  # where this job's numbers come from, for every figure
        self.runs = runs
        self.send = send
        self.state = _State()
        self.args = job.exercise.harness.args_for(job.exercise.language)
        self.gpu: GpuReport | None = None  # the cuda backend's timing, occupancy and metrics
        self.trusts_checks = False  # the cuda child judges on the device: its process never imports learner code
        self.compile_key = ""  # the job's key in the worker's compile cache (GPU jobs), and what to keep under it
        self.kept: dict[str, Any] = {}
        self.trusts_compile_facts = False  # the same child's registers and spills; else the engine's ptxas
        self.budget = Budget(len(runs))

    def __call__(self, message: dict[str, Any]) -> None:
        self.budget.count(message["type"])  # OverBudget past an honest child's count of this type
        data = message.get("data")
        message = wire.fit(message)  # words cut to size again: the child's cut is not to be trusted
        if data is not None:
            message["data"] = data
        try:
            self._handle(message)
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, FormulaError):
                raise
            raise _Malformed(str(exc)) from None

    def _handle(self, message: dict[str, Any]) -> None:
        state, kind = self.state, message["type"]
        if self.gpu is not None and self.gpu.handle(message):
            return
        if kind == "hello":
            pass  # its uid is the child's word; the job's uid is the one the engine leased
        elif kind == "compiled":
            state.compile = self._facts(CompileInfo.model_validate(message["compile"]), message.get("ptx"))
            self.send("compiled", **state.compile.model_dump())
            self._analyse(state.compile)
        elif kind == "compile_answer" and self.compile_key:  # a GPU job's compile, kept for this source
            self.kept["answer"] = dict(message["answer"])
        elif kind == "listing" and state.compile is not None:  # PTX and SASS, sent after the measurements
            listed = {k: message[k] for k in ("ptx_excerpt", "sass_excerpt") if message.get(k)}
            notes = [*state.compile.notes, *map(str, message.get("notes") or [])]
            if self.compile_key and self.job.exercise.language == "cuda" and listed:
                self.kept["listing"] = {**listed, "notes": list(map(str, message.get("notes") or []))}
            state.compile = CompileInfo.model_validate({**state.compile.model_dump(), **listed, "notes": notes})
            self.send("compiled", **state.compile.model_dump())
        elif kind == "memory":
            state.memory = dict(message["memory"])
            self.send("memory", index=int(message.get("index", 0)), **state.memory)
        elif kind == "runtime_error" and self._sweep_block(message) is not None:
            # the exercise's sizes were all judged before the sweep began: this ends the curve, not the verdict
            state.sweep_error = f"at block size {self._sweep_block(message)}: {message.get('message', '')}"
        elif kind in ("compile_error", "rejected", "runtime_error", "not_run"):
            if state.verdict is not None:
                return  # the first verdict stands
            state.verdict, state.message = kind, str(message.get("message", ""))
            state.diagnostics = [Diagnostic.model_validate(d) for d in message.get("diagnostics") or []]
            if message.get("compile") and state.compile is None:  # a verdict does not rewrite a compile report
                state.compile = self._facts(CompileInfo.model_validate(message["compile"]), None)
            if kind == "compile_error":
                state.compile = state.compile or CompileInfo()
                state.compile.diagnostics = state.diagnostics or state.compile.diagnostics
                self.send(
                    "compile_error",
                    message=state.message,
                    diagnostics=[d.model_dump() for d in state.compile.diagnostics],
                )
        elif kind == "outputs":
            self._check(int(message["index"]), message.get("data") or {})
        elif kind == "checked" and self.trusts_checks:
            self._take_checks(int(message["index"]), message.get("phase", "launch"), message["checks"])
        elif kind == "finished":
            state.finished = True
        elif kind == "error":
            state.infra_error = str(message.get("message", "the job's child process failed"))

    def _facts(self, claimed: CompileInfo, ptx: Any) -> CompileInfo:
        """The compile report with compiler facts the engine can stand behind.

        The cuda child never imports learner code, so its report stands. On the sim backend the learner's
        module is imported by the compile process and the child that relays its report: registers, shared
        memory, spills and local memory come from the engine's own ptxas run on the PTX instead.
        """
        if self.trusts_compile_facts:
            return claimed
        tool = COMPILERS.get(self.job.exercise.language, self.job.exercise.language)
        text = ptx if isinstance(ptx, str) else None
        triton = self.job.exercise.language == "triton"
        return ptxas.engine_facts(claimed, text, self.job.exercise.entry, tool, triton=triton)

    def _sweep_block(self, message: dict[str, Any]) -> int | None:
        """The block size of the sweep point this message is about, or None (a size of the exercise, or none)."""
        index = message.get("index")
        if type(index) is not int or not 0 <= index < len(self.runs):
            return None
        return self.runs[index].get("sweep_block")

    def _analyse(self, compiled: CompileInfo) -> None:
        run = self.runs[0]
        threads = run.get("threads_per_block") or math.prod(run["block"])
        found = analysis.calculator_occupancy(compiled, threads, run.get("shared_bytes", 0), self.label)
        if found is None:
            return
        self.state.occupancy, figures = found
        self.send("occupancy", **self.state.occupancy)
        for figure in figures:
            self.figure(figure)

    def figure(self, figure: dict[str, Any]) -> None:
        self.state.figures.append(figure)
        self.send("figure", **figure)

    def _take_checks(self, index: int, phase: str, checks: list[dict[str, Any]]) -> None:
        """Checks the measuring process made on the device (it never imported learner code)."""
        if not 0 <= index < len(self.runs) or self.state.verdict:
            raise _Malformed(f"unexpected checks for size {index}")
        if phase == "launch":
            if index in self.state.outputs_seen:
                raise _Malformed(f"checks for size {index} twice")
            self.state.outputs_seen.add(index)
        elif phase != "timed" or index in self.state.timed_seen:
            raise _Malformed(f"unexpected {phase} checks for size {index}")
        else:
            self.state.timed_seen.add(index)
        wanted = len(self.job.exercise.harness.expected) * (len(self.runs[index].get("timed_seeds") or [1]))
        if len(checks) > max(wanted, 1) * 4:
            raise _Malformed("too many checks")
        for raw in checks:
            info = CheckInfo.model_validate(raw)
            info.sizes = dict(self.runs[index]["sizes"])
            if is_sweep(self.runs[index]) and self.gpu is not None:
                self.gpu.sweep_checks.setdefault(index, []).append(info)  # the curve's, not the verdict's
                continue
            self.state.checks.append(info)
            self.send("check", index=index, **info.model_dump())

    def _check(self, index: int, data: dict[str, Any]) -> None:
        if not 0 <= index < len(self.runs) or index in self.state.outputs_seen or self.state.verdict:
            raise _Malformed(f"unexpected outputs for size {index}")
        self.state.outputs_seen.add(index)
        run = self.runs[index]
        harness = self.job.exercise.harness
        inputs = input_arrays(self.args, run["sizes"], run["seed"])
        for arg in self.args:
            if arg.role != "out" or arg.name not in harness.expected:
                continue
            got = data.get(arg.name)
            if got is None or str(got.dtype) != arg.dtype or tuple(got.shape) != shape_of(arg, run["sizes"]):
                raise _Malformed(f"output {arg.name!r} is missing or has the wrong type or shape")
            expected = array_value(harness.expected[arg.name], inputs)
            info = checker.compare(arg.name, expected, got, harness.tolerance, run["sizes"])
            self.state.checks.append(info)
            self.send("check", index=index, **info.model_dump())


def checks_passed(count: int) -> str:
    """ "1 check passed", "both checks passed", "all 3 checks passed": the accepted verdict's sentence."""
    if count == 1:
        return "1 check passed"
    return "both checks passed" if count == 2 else f"all {count} checks passed"


def _verdict(state: _State, run: sandbox.SandboxRun, runs: list[dict[str, Any]], wall_limit: float) -> tuple[str, str]:
    if run.timed_out:
        return "timeout", f"time limit exceeded: the job ran longer than {wall_limit:g} s (wall clock) and was stopped"
    if state.verdict:
        return state.verdict, state.message
    if state.infra_error:
        return "error", state.infra_error
    if state.outputs_seen >= {i for i, r in enumerate(runs) if not is_sweep(r)}:  # a sweep ends as it may
        failed = [c for c in state.checks if not c.passed]
        if failed:
            first = failed[0]
            where = f" for {first.sizes}" if first.sizes else ""
            return "wrong_answer", f"output {first.output!r}{where}: {first.message}"
        return "accepted", checks_passed(len(state.checks))
    code = run.returncode
    if run.oom_kills:
        limit = run.info.get("cgroup", {}).get("memory_mb", "its")
        return "runtime_error", (
            f"out of memory: the job went over its memory limit of {limit} MB (counted over all its processes "
            f"and its /tmp), and the kernel stopped it"
        )
    if code is not None and code in (-24, 128 + 24, 152):
        return "timeout", "CPU time limit exceeded"
    status = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
    if code is not None and code > 128:
        status = f"signal {code - 128}"
    return "runtime_error", f"the job ended before it finished ({status}): a crash, out of memory or an exit() call"


def run_job(job: Job, emit: Emit, backend: str = "sim", *, module_rules: bool = True) -> Result:
    """Run one job to its verdict, emitting events along the way; never raises for the learner's faults.

    A root worker leases the job's uid first (`isolation.uid_pool`): the job runs as it and the result names it.
    `module_rules=False` lets a CUDA Python module run code at import (`backends.module_rules` off): only
    the sandbox's tests ask for it, to put hostile code in front of the sandbox's walls.
    """
    if job.exercise.language == "policy":  # a scheduling policy, not a kernel: gpu_worker.datacenter
        from gpu_worker.datacenter.runner import run_policy_job

        return run_policy_job(job, emit, backend)  # its sandbox leases the job's uid itself
    lease = None
    if os.geteuid() == 0:
        try:
            lease = uid_pool.lease()
        except (uid_pool.NoFreeUid, OSError) as exc:
            counter = itertools.count(FIRST_SEQ)
            emit(Event.of("started", next(counter), backend=job.backend or backend, worker=_worker(backend)))
            emit(Event.of("error", next(counter), message=f"the worker cannot start another job now: {exc}"))
            return Result(
                submission_id=job.submission_id,
                verdict="error",
                backend=job.backend or backend,  # type: ignore[arg-type]
                device=job.backend or backend,
                message=f"the worker cannot start another job now: {exc}",
            )
    try:
        return _run_job(job, emit, backend, lease.uid if lease is not None else None, module_rules)
    finally:
        if lease is not None:
            lease.release()


def _run_job(job: Job, emit: Emit, backend: str, uid: int | None, module_rules: bool = True) -> Result:
    started = time.monotonic()
    backend_name = job.backend or backend
    counter = itertools.count(FIRST_SEQ)

    def send(kind: str, **fields: Any) -> None:
        emit(Event.of(kind, next(counter), **fields))

    def finish(verdict: str, message: str, **fields: Any) -> Result:
        result = Result(
            submission_id=job.submission_id,
            verdict=verdict,  # type: ignore[arg-type]
            backend=backend_name,  # type: ignore[arg-type]
            device=device,
            message=message,
            elapsed_seconds=round(time.monotonic() - started, 3),
            **fields,
        )
        size = len(result.model_dump_json())
        if size > RESULT_BYTES:  # the learner's words (output, diagnostics, forged reports) made it this big
            verdict = "runtime_error"
            message = f"your program's result was {size} bytes, over the limit of {RESULT_BYTES}"
            result = Result(
                submission_id=job.submission_id,
                verdict="runtime_error",
                backend=backend_name,  # type: ignore[arg-type]
                device=device,
                message=message,
                elapsed_seconds=result.elapsed_seconds,
                sandbox=fields.get("sandbox") or {},
            )
        if verdict == "error":
            send("error", message=message)
        else:
            judged = {k: fields[k] for k in ("goals", "goals_met") if k in fields}  # the goals' checklist
            send("done", verdict=verdict, message=message, elapsed_seconds=result.elapsed_seconds, **judged)
        return result

    device = backend_name
    try:
        device = device_name(backend_name)
        if backend_name == "sim" and job.exercise.language == "triton":
            device = TRITON_INTERPRETER
    except (ImportError, ValueError) as exc:
        send("started", backend=backend_name, device=device, worker=_worker(backend_name))
        return finish("error", f"the {backend_name} backend is not available on this worker: {exc}")
    limits = job.exercise.limits
    runs: list[dict[str, Any]] = []
    rejection = _precheck(job)
    if rejection is None:
        try:
            runs = _runs(job, backend_name)
        except LaunchRejected as exc:
            rejection = f"launch rejected: {exc}"
    extra = _extra_processes(backend_name, runs)
    try:
        isolation = sandbox.describe(backend_name, limits, extra, uid=uid)
    except RuntimeError as exc:
        send("started", backend=backend_name, device=device, worker=_worker(backend_name))
        return finish("error", str(exc))
    send("started", backend=backend_name, device=device, worker=_worker(backend_name), sandbox=isolation)
    if rejection:
        return finish("rejected", rejection, sandbox=isolation)
    request = _request(job, backend_name, runs, module_rules)
    judge = _Judge(job, runs, send, analysis.source_label(backend_name, device, job.exercise.language))
    lock_fd = None
    if backend_name == "cuda":  # GPU measurements: occupancy and timing per size, under the per-GPU lock
        judge.gpu = GpuReport(job, runs, send, judge.state.checks, load_ceilings())
        request["measure"] = True
        harness = job.exercise.harness
        request["check"] = {"expected": harness.expected, "tolerance": harness.tolerance.model_dump()}
        judge.trusts_checks = True
        judge.trusts_compile_facts = True
        judge.compile_key = compile_cache.key(job, device)  # compile once per source, toolchain and GPU
        if kept := compile_cache.load(judge.compile_key):
            request["cached"] = kept
        for index, r in enumerate(runs):  # the timed launches' own inputs, never the checked launch's
            r["timed_seeds"] = [job_seed(harness.seed, job.submission_id, 1000 + 2 * index + k) for k in range(2)]
    warm = _take_spare(backend_name, limits, extra)  # a spare child already warm, or None: a cold start
    if backend_name == "cuda":
        lock_fd = open_worker_lock_fd() if warm is None else None  # a spare holds its own, inherited at its start
        request["gpu_lock_fd"] = lock_fd if warm is None else warm.lock_fd
    malformed = ""
    try:
        run = sandbox.run_sandboxed(
            request,
            limits,
            backend_name,
            judge,
            extra_processes=extra,
            final_types=FINAL_TYPES,
            inherit_fds=(lock_fd,) if lock_fd is not None else (),
            max_message_bytes=_message_budget(judge.args, runs),
            spare=warm.started if warm is not None else None,
            uid=uid,
        )
    except (OverBudget, WireOverflow) as exc:
        malformed = f"{exc}; the engine stopped reading it"
        run = None
    except (_Malformed, WireError) as exc:
        malformed = f"the job's messages were malformed ({exc}); did your code write to the engine's pipe?"
        run = None
    except Exception as exc:  # ours: the sandbox or the checker failed
        return finish("error", f"the worker failed to run the job: {type(exc).__name__}: {exc}", sandbox=isolation)
    finally:
        if lock_fd is not None:
            os.close(lock_fd)
        if warm is not None:
            warm.release()
    state = judge.state
    if judge.kept and state.compile is not None and state.verdict not in ("compile_error", "rejected"):
        compile_cache.store(judge.compile_key, judge.kept)
    if run is not None:  # what the sandbox itself knows of the job: its uid, its cgroup's peak memory
        isolation = {**isolation, **{k: run.info[k] for k in ("uid", "memory_peak_mb") if k in run.info}}
    if spare.enabled():
        isolation = {**isolation, "warm_start": warm is not None}
    if run is None:
        verdict, message = "runtime_error", malformed
        output, truncated = "", False
    else:
        verdict, message = _verdict(state, run, runs, limits.wall_seconds)
        output, truncated = run.output, run.output_truncated
    failing = next((c for c in state.checks if not c.passed), None)
    gpu_fields = judge.gpu.result_fields() if judge.gpu is not None else {}
    if verdict in ("accepted", "wrong_answer", "not_run"):
        judge.figure(
            analysis.roofline(
                job.exercise.harness.work,
                [r["sizes"] for r in runs if not is_sweep(r)],
                judge.gpu.metrics if judge.gpu is not None else {},
                judge.gpu.ceilings if judge.gpu is not None else None,
                device,
                judge.label,
                job.history,
                job.reference,
            )
        )
    sweep = job.exercise.harness.sweep
    if sweep is not None and verdict == "accepted" and judge.gpu is not None:  # the sizes are the sweep's points
        curve = sweep_figure(sweep, judge.gpu.metrics, judge.label, judge.gpu.occupancies)
        if curve is not None:
            judge.figure(curve)
    if verdict == "accepted" and judge.gpu is not None and judge.gpu.sweep_metrics:
        chosen = max(judge.gpu.metrics, default=None)  # the largest size: the sweep's
        curve = block_sweep_figure(judge.gpu.block_sweep(chosen), state.sweep_error, judge.label)
        if curve is not None:
            judge.figure(curve)
    if state.occupancy is not None:
        gpu_fields["occupancy"] = {**(gpu_fields.get("occupancy") or {}), "calculator": state.occupancy}
    judged = goals.judge(
        job.exercise.harness.goals,
        backend_name,
        verdict,
        memory=state.memory,
        metrics=gpu_fields.get("metrics"),
        occupancy=state.occupancy,
        work=job.exercise.harness.work,
        sizes=runs[0]["sizes"] if runs else None,
    )
    return finish(
        verdict,
        goals.message(message, judged),
        **goals.result_fields(judged),
        compile=state.compile,
        checks=state.checks,
        check=failing or (state.checks[-1] if state.checks else None),
        diagnostics=state.diagnostics if verdict != "compile_error" else [],
        sandbox=isolation,
        output=output,
        output_truncated=truncated,
        memory=state.memory,
        figures=state.figures,
        **gpu_fields,
    )


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


TRITON_INTERPRETER = "Triton interpreter (CPU, TRITON_INTERPRET=1): correctness only, not timed"
PROFILE_FIRST_SEQ = 10_000  # a profile's events follow the run's, whatever their count


def run_profile(job: Job, emit: Emit, backend: str = "cuda") -> dict[str, Any] | None:
    """Nsight Compute for a run already judged, on the profile lane: never on any learner's verdict path.

    The kernel is compiled again and launched once under ncu in its own sandboxed child
    (`gpu_worker.profiling`); emits one `profile` event and returns its facts (None off a GPU).
    """
    counter = itertools.count(PROFILE_FIRST_SEQ)

    def send(kind: str, **fields: Any) -> None:
        emit(Event.of(kind, next(counter), **fields))

    try:
        runs = [r for r in _runs(job, backend) if not is_sweep(r)]  # the profile is of the graded launch
    except LaunchRejected as exc:
        facts = profiling.unavailable(f"launch rejected: {exc}")
        send("profile", **facts)
        return facts
    request = _request(job, backend, runs)
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


def _take_spare(backend: str, limits: Limits, extra: int) -> spare.Spare | None:
    """The ready spare for this job (see `gpu_worker.isolation.spare`), and the next one started; None: start cold."""
    if not spare.enabled():
        return None
    warm = spare.take(backend, limits, extra)
    with contextlib.suppress(Exception):  # without a next spare the next job starts cold, as without spares
        spare.refill(backend, limits, extra)  # starts while this job runs: only a fork and exec here
    return warm


def _message_budget(args: list[Any], runs: list[dict[str, Any]]) -> int:
    """What the child may send: every size's outputs (the GPU sizes reach 200 MB) plus 64 MiB for the rest."""
    outputs = 0
    for r in runs:
        for a in args:
            if a.role == "out":
                count = 1
                for d in shape_of(a, r["sizes"]):
                    count *= d
                outputs += count * np.dtype(a.dtype).itemsize
    return outputs + 64 * 1024 * 1024


def _worker(backend: str) -> str:
    return f"{socket.gethostname()}:{os.getpid()} ({backend})"
