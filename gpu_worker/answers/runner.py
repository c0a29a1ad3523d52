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

from typing import Any

from pydantic import ValidationError

from gpu_worker.answers.graders import get_grader
from gpu_worker.isolation import learner_python
from gpu_worker.protocol import CheckInfo, Diagnostic, Job, Outcome, Result

CHILD_MODULE = "gpu_worker.answers.child"
DEVICE = "CPU (your function's answers against a reference; no GPU used)"
FINAL_TYPES = frozenset({"finished", "compile_error", "runtime_error", "error"})
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


def run_function_job(job: Job, emit: Any, backend: str = "sim") -> Result:
    """Run one function job to its verdict, emitting events; never raises for the learner's faults."""
    started = learner_python.begin(job, emit, backend, DEVICE)
    if isinstance(started, Result):
        return started
    outcome, spec, limits = started, job.exercise.harness.function, job.exercise.limits
    if spec is None:
        return outcome.finish("error", "this exercise has no 'function' settings: the lab folder is broken")
    try:
        grader = get_grader(spec.grader)
        calls = grader.calls(spec.cases)
    except ValueError as exc:
        return outcome.finish("error", f"the lab folder is broken: {exc}")
    rejection = learner_python.precheck(job)
    if rejection:
        return outcome.finish("rejected", rejection)
    collector = _Collector(len(calls))
    request = {"source": job.source, "entry": job.exercise.entry, "calls": calls}
    ran = learner_python.run_child(
        outcome,
        request,
        limits,
        collector,
        child_module=CHILD_MODULE,
        max_message_bytes=MAX_MESSAGE_BYTES,
        final_types=FINAL_TYPES,
        malformed=(_Malformed,),
        what="function",
    )
    if isinstance(ran, Result):
        return ran
    run, printed = ran
    if collector.failure is not None:
        kind, message, diagnostics, index = collector.failure
        if kind == "compile_error":
            return learner_python.compile_error(outcome, message, diagnostics, printed)
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
