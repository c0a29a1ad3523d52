"""The engine's side of a function exercise: sandbox the learner's function, judge each answer it gave.

`run_function_job` is what `gpu_worker.engine.run_job` hands a job in language
`function`. The lab's grader (`graders`) turns its cases into calls; the
sandboxed child (`child`) makes them and sends back the answers. This process
trusts none of it: it bounds the messages, needs exactly one answer per call, and
judges every answer against the grader's own reference, so a child that lies can
only fail its own job.

Events: `started`, then `compile_error`, or one `check` per call, and `done`.
"""

from __future__ import annotations

import os
import re
import socket
from typing import Any

from pydantic import ValidationError

from gpu_worker.answers.graders import get_grader
from gpu_worker.isolation import sandbox
from gpu_worker.isolation.wire import WireError
from gpu_worker.protocol import MAX_SOURCE_BYTES, CheckInfo, CompileInfo, Diagnostic, Job, Outcome, Result

CHILD_MODULE = "gpu_worker.answers.child"
DEVICE = "CPU (your function's answers against a reference; no GPU used)"
FINAL_TYPES = frozenset({"finished", "compile_error", "runtime_error", "error"})
EXTRA_PROCESSES = 8
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class _Malformed(Exception):
    """The child sent something that does not fit the job."""


class _Collector:
    """The child's messages, validated and bounded as they arrive."""

    def __init__(self, calls: int):
        self.calls = calls
        self.answers: list[Any] = []
        self.finished = False
        self.failure: tuple[str, str, list[Diagnostic], int | None] | None = None
        self.infra_error = ""

    def __call__(self, message: dict[str, Any]) -> None:
        try:
            self._handle(message)
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            raise _Malformed(str(exc)) from None

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "hello":
            int(message["uid"])
        elif kind == "answers":
            chunk = message["answers"]
            if not isinstance(chunk, list) or len(self.answers) + len(chunk) > self.calls:
                raise _Malformed("more answers than cases")
            self.answers += chunk
        elif kind in ("compile_error", "runtime_error"):
            if self.failure is None:
                diagnostics = [Diagnostic.model_validate(d) for d in (message.get("diagnostics") or [])[:5]]
                index = message.get("index")
                self.failure = (
                    kind,
                    str(message.get("message", ""))[:2000],
                    diagnostics,
                    index if isinstance(index, int) else None,
                )
        elif kind == "finished":
            self.finished = True
        elif kind == "error":
            self.infra_error = str(message.get("message", "the function's child process failed"))[:2000]
        else:
            raise _Malformed(f"an unknown message {kind!r}")


def _precheck(job: Job) -> str | None:
    if not job.source.strip():
        return "your file is empty"
    size = len(job.source.encode("utf-8", errors="replace"))
    if size > MAX_SOURCE_BYTES:
        return f"your file is {size} bytes, over the limit of {MAX_SOURCE_BYTES} bytes"
    if not re.search(rf"^\s*def\s+{re.escape(job.exercise.entry)}\s*\(", job.source, re.MULTILINE):
        return f"no function named {job.exercise.entry!r} in your file (expected `def {job.exercise.entry}(...)`)"
    return None


def run_function_job(job: Job, emit: Any, backend: str = "sim") -> Result:
    """Run one function job to its verdict, emitting events; never raises for the learner's faults."""
    outcome = Outcome(job.submission_id, emit, job.backend or backend, DEVICE)
    worker = f"{socket.gethostname()}:{os.getpid()} ({outcome.backend})"
    spec, limits = job.exercise.harness.function, job.exercise.limits
    try:
        outcome.sandbox = sandbox.describe("sim", limits, EXTRA_PROCESSES)
    except RuntimeError as exc:
        outcome.send("started", backend=outcome.backend, device=DEVICE, worker=worker)
        return outcome.finish("error", str(exc))
    outcome.send("started", backend=outcome.backend, device=DEVICE, worker=worker, sandbox=outcome.sandbox)
    if spec is None:
        return outcome.finish("error", "this exercise has no 'function' settings: the lab folder is broken")
    try:
        grader = get_grader(spec.grader)
        calls = grader.calls(spec.cases)
    except ValueError as exc:
        return outcome.finish("error", f"the lab folder is broken: {exc}")
    rejection = _precheck(job)
    if rejection:
        return outcome.finish("rejected", rejection)
    collector = _Collector(len(calls))
    request = {"source": job.source, "entry": job.exercise.entry, "calls": calls}
    try:
        run = sandbox.run_sandboxed(
            request,
            limits,
            "sim",
            collector,
            extra_processes=EXTRA_PROCESSES,
            max_message_bytes=MAX_MESSAGE_BYTES,
            final_types=FINAL_TYPES,
            child_module=CHILD_MODULE,
        )
    except (_Malformed, WireError) as exc:
        return outcome.finish(
            "runtime_error", f"the function's messages were malformed ({exc}); did it write to our pipe?"
        )
    except Exception as exc:  # ours: the sandbox failed
        return outcome.finish("error", f"the worker failed to run the function: {type(exc).__name__}: {exc}")
    outcome.sandbox = {**outcome.sandbox, "uid": run.info["uid"]}  # the sandbox's lease, not the child's word
    printed = {"output": run.output, "output_truncated": run.output_truncated}
    if run.timed_out:
        return outcome.finish(
            "timeout", f"time limit exceeded: the function ran longer than {limits.wall_seconds:g} s", **printed
        )
    if collector.failure is not None:
        kind, message, diagnostics, index = collector.failure
        if kind == "compile_error":
            outcome.send("compile_error", message=message, diagnostics=[d.model_dump() for d in diagnostics])
            return outcome.finish(
                "compile_error", message, compile=CompileInfo(tool="python", diagnostics=diagnostics), **printed
            )
        where = f"case {index + 1} of {len(calls)}: " if index is not None and index < len(calls) else ""
        return outcome.finish("runtime_error", where + message, diagnostics=diagnostics, **printed)
    if collector.infra_error:
        return outcome.finish("error", collector.infra_error, **printed)
    if not collector.finished or len(collector.answers) != len(calls):
        return outcome.finish(
            "runtime_error",
            f"the function's process ended after {len(collector.answers)} of {len(calls)} answers (exit status "
            f"{run.returncode}): a crash, out of memory or an exit() call",
            **printed,
        )
    return _judge(grader, calls, collector.answers, outcome, printed)


def _judge(
    grader: Any, calls: list[list[dict[str, Any]]], answers: list[Any], outcome: Outcome, printed: dict
) -> Result:
    checks: list[CheckInfo] = []
    for index, (call, answer) in enumerate(zip(calls, answers, strict=True)):
        judged = grader.judge(call, answer)
        info = CheckInfo(passed=judged.passed, output=judged.label, sizes={"case": index + 1}, message=judged.message)
        checks.append(info)
        outcome.send("check", index=index, **info.model_dump())
    failed = [c for c in checks if not c.passed]
    if failed:
        verdict = "wrong_answer"
        message = f"{len(failed)} of {len(checks)} answers wrong; the first: {failed[0].message}"
    else:
        verdict, message = "accepted", f"all {len(checks)} answers right"
    check = failed[0] if failed else checks[-1]
    return outcome.finish(verdict, message, checks=checks, check=check, **printed)
