"""The engine's judge of a job's child, as it talks: its messages become events and checks the moment they arrive.

The sandboxed child's messages are hostile data (it relays what a process that imported learner code
said): `Judge` validates each against the job, keeps only the compiler facts the engine can stand
behind (`ptxas.engine_facts` on the CPU tier), recomputes the expected outputs from the lab's formulas
and compares, and streams `compiled`, `occupancy`, `figure`, `memory` and `check` events. `verdict_of`
turns what was said, and how the sandbox ended, into the verdict and its sentence.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from gpu_worker.backends import ptx_sim, ptxas
from gpu_worker.exercise import checker
from gpu_worker.exercise.formula import FormulaError, array_value
from gpu_worker.exercise.inputs import input_arrays, shape_of
from gpu_worker.exercise.plan import is_sweep
from gpu_worker.figures import analysis
from gpu_worker.isolation import sandbox, wire
from gpu_worker.isolation.message_budget import Budget
from gpu_worker.measurement.gpu_report import GpuReport
from gpu_worker.protocol import CheckInfo, CompileInfo, Diagnostic, Job

log = logging.getLogger(__name__)

# Who made the PTX that the engine assembles on the sim backend, by language (the engine's own words).
COMPILERS = {
    "numba": "numba-cuda (NVVM)",
    "triton": "Triton (compiled for sm_90) + PTX executor (CPU)",
    "cuda": "nvcc",
}


class Malformed(Exception):
    """The child sent a message that does not fit the job (a bug, or the learner writing to our pipe)."""


@dataclass
class JobState:
    """What the child has told us so far."""

    compile: CompileInfo | None = None
    verdict: str | None = None
    message: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    checks: list[CheckInfo] = field(default_factory=list)
    outputs_seen: set[int] = field(default_factory=set)
    timed_seen: set[int] = field(default_factory=set)  # sizes whose timed launches were checked
    finished: bool = False
    listing_follows: bool = False  # the CPU tier: the child said its SASS listing comes after `finished`
    infra_error: str = ""
    occupancy: dict[str, Any] | None = None  # the calculator's, from the compiled resources
    sweep_error: str = ""  # the runtime error that ended the learner's block-size sweep
    memory: dict[str, Any] | None = None  # the simulator's coalescing and bank-conflict analysis
    figures: list[dict[str, Any]] = field(default_factory=list)
    executed_by: str | None = None  # sim backend: the engine's own reading of the PTX (`ptx_sim.executed_by`)


class Judge:
    """Turns the child's messages into events and checks, as they arrive."""

    def __init__(self, job: Job, runs: list[dict[str, Any]], send: Callable[..., None], label: str = ""):
        self.job = job
        self.label = label  # where this job's numbers come from, for every figure
        self.runs = runs
        self.send = send
        self.state = JobState()
        self.args = job.exercise.harness.args_for(job.exercise.language)
        self.gpu: GpuReport | None = None  # the cuda backend's timing, occupancy and metrics
        self.trusts_checks = False  # the cuda child judges on the device: its process never imports learner code
        self.compile_key = ""  # the job's key in the worker's compile cache (GPU jobs), and what to keep under it
        self.kept: dict[str, Any] = {}
        self.keeps_listing = False  # the CPU tier keeps every language's SASS listing (`_listing_kept`)
        self.trusts_compile_facts = False  # the same child's registers and spills; else the engine's ptxas
        self.budget = Budget(len(runs))
        self.warm_up_cpu_s: dict[str, float] = {}  # a spare's own count by warm-up step (`hello`), for benchmarks

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
            raise Malformed(str(exc)) from None

    def _handle(self, message: dict[str, Any]) -> None:
        state, kind = self.state, message["type"]
        if self.gpu is not None and self.gpu.handle(message):
            return
        if kind == "hello":  # its uid is the child's word; the job's uid is the one the engine leased
            # a spare's CPU seconds by warm-up step: its own count, made before any learner code was in it
            steps = message.get("warm_up_cpu_s") or {}
            self.warm_up_cpu_s = {str(k)[:40]: round(float(v), 4) for k, v in list(steps.items())[:12]}
            if self.trusts_checks and message.get("rehearsal_problems"):  # the measuring process, before its job
                log.warning("spare's rehearsal warmed only in part: %s", list(message["rehearsal_problems"])[:5])
        elif kind == "compiled":
            state.compile = self._facts(CompileInfo.model_validate(message["compile"]), message.get("ptx"))
            self._executed_by(message.get("ptx"))
            self.send("compiled", **state.compile.model_dump())
            self._analyse(state.compile)
        elif kind == "compile_answer" and self.compile_key:  # a GPU job's compile, kept for this source
            self.kept["answer"] = dict(message["answer"])
        elif kind == "listing" and state.compile is not None:  # PTX and SASS, sent after the measurements
            listed = {k: message[k] for k in ("ptx_excerpt", "sass_excerpt") if message.get(k)}
            notes = [*state.compile.notes, *map(str, message.get("notes") or [])]
            if self.compile_key and (self.job.exercise.language == "cuda" or self.keeps_listing) and listed:
                self.kept["listing"] = {**listed, "notes": list(map(str, message.get("notes") or []))}
            state.compile = CompileInfo.model_validate({**state.compile.model_dump(), **listed, "notes": notes})
            self.send("compiled", **state.compile.model_dump())
        elif kind == "memory":
            state.memory = dict(message["memory"])
            self.send("memory", index=int(message.get("index", 0)), **state.memory)
        elif kind == "runtime_error" and self._sweep_block(message) is not None:
            # the exercise's sizes were all judged before the sweep began: this ends the curve, not the verdict
            state.sweep_error = f"at block size {self._sweep_block(message)}: {message.get('message', '')}"
        elif kind in ("compile_error", "rejected", "runtime_error", "timeout", "not_run"):
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
            state.listing_follows = message.get("listing_follows") is True
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

    def _executed_by(self, ptx: Any) -> None:
        """On the sim backend, what ran the kernel: the executor or a fallback, from the PTX, never the child's notes.

        A second report that reads as a fallback wins over a first that did not: the run counts as the weaker.
        """
        if self.trusts_compile_facts:
            return
        job = self.job
        found = ptx_sim.executed_by(
            ptx if isinstance(ptx, str) else None, job.exercise.entry, job.exercise.language, self.args
        )
        if self.state.executed_by in (None, "ptx_executor"):
            self.state.executed_by = found

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
            raise Malformed(f"unexpected checks for size {index}")
        if phase == "launch":
            if index in self.state.outputs_seen:
                raise Malformed(f"checks for size {index} twice")
            self.state.outputs_seen.add(index)
        elif phase != "timed" or index in self.state.timed_seen:
            raise Malformed(f"unexpected {phase} checks for size {index}")
        else:
            self.state.timed_seen.add(index)
        wanted = len(self.job.exercise.harness.expected) * (len(self.runs[index].get("timed_seeds") or [1]))
        if len(checks) > max(wanted, 1) * 4:
            raise Malformed("too many checks")
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
            raise Malformed(f"unexpected outputs for size {index}")
        self.state.outputs_seen.add(index)
        run = self.runs[index]
        harness = self.job.exercise.harness
        inputs = input_arrays(self.args, run["sizes"], run["seed"])
        for arg in self.args:
            if arg.role != "out" or arg.name not in harness.expected:
                continue
            got = data.get(arg.name)
            if got is None or str(got.dtype) != arg.dtype or tuple(got.shape) != shape_of(arg, run["sizes"]):
                raise Malformed(f"output {arg.name!r} is missing or has the wrong type or shape")
            expected = array_value(harness.expected[arg.name], inputs)
            info = checker.compare(arg.name, expected, got, harness.tolerance, run["sizes"])
            self.state.checks.append(info)
            self.send("check", index=index, **info.model_dump())


def checks_passed(count: int) -> str:
    """ "1 check passed", "both checks passed", "all 3 checks passed": the accepted verdict's sentence."""
    if count == 1:
        return "1 check passed"
    return "both checks passed" if count == 2 else f"all {count} checks passed"


def verdict_of(
    state: JobState, run: sandbox.SandboxRun, runs: list[dict[str, Any]], wall_limit: float
) -> tuple[str, str]:
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
    if code is None:  # judged at its final message (`engine._EarlyVerdict`), before it ended
        status = "its last message came before all its outputs"
    elif code > 128:
        status = f"signal {code - 128}"
    return "runtime_error", f"the job ended before it finished ({status}): a crash, out of memory or an exit() call"
