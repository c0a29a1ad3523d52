"""A learner's plain Python in a sandboxed child (a scheduling policy, a function exercise): what both kinds share.

The child's side: `serve` is the child's whole `main` (read the request, drop to the job's uid, say `hello`,
run, report our own failures as `error`, and let no forked copy talk), and `load_entry` imports the learner's
file and finds its function, sending `compile_error` or `runtime_error` when it cannot.

The engine's side: `precheck` refuses what need not start a sandbox, `begin` sends `started` with the sandbox's
description, and `run_child` runs the child and turns what ended it early (malformed messages, our own
failure, the wall clock, a syntax error) into the finished result, or hands back the run to judge.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from gpu_worker.isolation import sandbox
from gpu_worker.isolation.wire import MessageWriter, WireError
from gpu_worker.protocol import MAX_SOURCE_BYTES, CompileInfo, Diagnostic, Job, Limits, Outcome, Result

EXTRA_PROCESSES = 8

# --- the child ---


def load_entry(
    writer: MessageWriter, request: dict[str, Any], file_name: str
) -> tuple[Callable[..., Any], Path] | None:
    """Import the learner's `source` as `file_name` in a private folder and return its `entry` function and the
    file's path; None once the child has said why it cannot (a syntax error, the import raised, no such function)."""
    from gpu_worker.backends.learner_module import import_learner_module
    from gpu_worker.exercise.diagnostics import from_exception, from_syntax_error
    from gpu_worker.isolation.child import _private_workdir

    path = _private_workdir() / file_name
    path.write_text(request["source"])
    try:
        module: ModuleType = import_learner_module(path, Path(file_name).stem, kernel_file=False)
    except SyntaxError as exc:
        diagnostics = [from_syntax_error(exc).model_dump()]
        writer.send({"type": "compile_error", "message": str(exc.msg), "diagnostics": diagnostics})
        return None
    except BaseException as exc:
        diagnostic = from_exception(exc, str(path))
        writer.send({"type": "runtime_error", "message": diagnostic.message, "diagnostics": [diagnostic.model_dump()]})
        return None
    function = getattr(module, request["entry"], None)
    if not callable(function):
        writer.send({"type": "runtime_error", "message": f"{file_name} defines no function {request['entry']}()"})
        return None
    return function, path


def serve(argv: list[str], run: Callable[[MessageWriter, dict[str, Any]], None], what: str) -> int:
    """The child's `main`: `argv` is `REQUEST_FD MESSAGE_FD`; `run(writer, request)` does the job's work."""
    from gpu_worker.isolation.child import _drop_privileges, _read_request

    request_fd, message_fd = int(argv[0]), int(argv[1])
    os.set_inheritable(message_fd, False)
    writer = MessageWriter(message_fd)
    pid = os.getpid()
    try:
        request = _read_request(request_fd)
        _drop_privileges(request.get("drop_uid"), request.get("drop_gid"))
        writer.send({"type": "hello", "pid": pid, "uid": os.getuid(), "gid": os.getgid()})
        run(writer, request)
    except BaseException as exc:  # ours, not the learner's
        if os.getpid() != pid:
            os._exit(0)
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            detail += f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})"
        with contextlib.suppress(OSError):
            writer.send({"type": "error", "message": f"the {what} child failed: {detail}"[:2000]})
        return 1
    if os.getpid() != pid:
        os._exit(0)
    return 0


# --- the engine ---


def precheck(job: Job) -> str | None:
    """Why the job is refused before a sandbox starts (an empty or oversized file, no entry function), or None."""
    if not job.source.strip():
        return "your file is empty"
    size = len(job.source.encode("utf-8", errors="replace"))
    if size > MAX_SOURCE_BYTES:
        return f"your file is {size} bytes, over the limit of {MAX_SOURCE_BYTES} bytes"
    if not re.search(rf"^\s*def\s+{re.escape(job.exercise.entry)}\s*\(", job.source, re.MULTILINE):
        return f"no function named {job.exercise.entry!r} in your file (expected `def {job.exercise.entry}(...)`)"
    return None


def begin(job: Job, emit: Any, backend: str, device: str) -> Outcome | Result:
    """The job's outcome with `started` sent (the sandbox described), or the result when no sandbox can run it."""
    outcome = Outcome(job.submission_id, emit, job.backend or backend, device)
    worker = f"{socket.gethostname()}:{os.getpid()} ({outcome.backend})"
    try:
        outcome.sandbox = sandbox.describe("sim", job.exercise.limits, EXTRA_PROCESSES)
    except RuntimeError as exc:
        outcome.send("started", backend=outcome.backend, device=device, worker=worker)
        return outcome.finish("error", str(exc))
    outcome.send("started", backend=outcome.backend, device=device, worker=worker, sandbox=outcome.sandbox)
    return outcome


def run_child(
    outcome: Outcome,
    request: dict[str, Any],
    limits: Limits,
    collector: Callable[[dict[str, Any]], None],
    *,
    child_module: str,
    max_message_bytes: int,
    final_types: frozenset[str],
    malformed: tuple[type[BaseException], ...],
    what: str,
) -> tuple[sandbox.SandboxRun, dict[str, Any]] | Result:
    """Run the child; the run and its printed output to judge, or the result when it ended the job: messages of
    a `malformed` kind or a broken wire (the learner's), the sandbox's failure (ours), the wall clock."""
    learners_fault: tuple[type[BaseException], ...] = (*malformed, WireError)
    try:
        run = sandbox.run_sandboxed(
            request,
            limits,
            "sim",
            collector,
            extra_processes=EXTRA_PROCESSES,
            max_message_bytes=max_message_bytes,
            final_types=final_types,
            child_module=child_module,
        )
    except learners_fault as exc:
        return outcome.finish(
            "runtime_error", f"the {what}'s messages were malformed ({exc}); did it write to our pipe?"
        )
    except Exception as exc:  # ours: the sandbox failed
        return outcome.finish("error", f"the worker failed to run the {what}: {type(exc).__name__}: {exc}")
    outcome.sandbox = {**outcome.sandbox, "uid": run.info["uid"]}  # the sandbox's lease, not the child's word
    printed = {"output": run.output, "output_truncated": run.output_truncated}
    if run.timed_out:
        return outcome.finish(
            "timeout", f"time limit exceeded: the {what} ran longer than {limits.wall_seconds:g} s", **printed
        )
    return run, printed


def compile_error(outcome: Outcome, message: str, diagnostics: list[Diagnostic], printed: dict[str, Any]) -> Result:
    """The learner's file did not parse: the `compile_error` event, then the result."""
    outcome.send("compile_error", message=message, diagnostics=[d.model_dump() for d in diagnostics])
    return outcome.finish(
        "compile_error", message, compile=CompileInfo(tool="python", diagnostics=diagnostics), **printed
    )
