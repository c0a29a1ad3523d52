"""The sandboxed child of a function exercise: call the learner's function on each case, send back its answers.

Started by `gpu_worker.isolation.sandbox` (`child_module`) as
`python -m gpu_worker.answers.child REQUEST_FD MESSAGE_FD`. It reads the request
(`source`, `entry`, and `calls`: one list of arguments per case, each argument a
mapping the learner reads by attribute), switches to uid 65534 when started as
root, imports the learner's file as `answer.py` and sends:

- `hello`, then `compile_error` (a SyntaxError) or `runtime_error` (the import raised);
- `answers` messages (chunks of the answers, in order, each made plain JSON: numbers,
  strings, booleans, None and short lists of them; anything else is sent as its type's
  name, which no reference matches), or `runtime_error` with the case's index when a
  call raised;
- `finished` at the end.

It judges nothing: the engine compares every answer with its own reference's.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from gpu_worker.isolation.child import _drop_privileges, _private_workdir, _read_request
from gpu_worker.isolation.wire import MessageWriter

CHUNK = 200  # answers per message
LEARNER_FILE = "answer.py"
MAX_ITEMS = 16  # of a list or tuple answer
MAX_TEXT = 200


def plain(value: Any, depth: int = 0) -> Any:
    """The answer as bounded JSON; what JSON cannot carry becomes a string naming its type."""
    if value is None or isinstance(value, bool | int | float):
        return value if not isinstance(value, int) or abs(value) < 2**53 else float(value)
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, list | tuple) and depth < 2:
        return [plain(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
    return f"<{type(value).__name__}>"


def _run(writer: MessageWriter, request: dict[str, Any]) -> None:
    from gpu_worker.backends.learner_module import import_learner_module
    from gpu_worker.exercise.diagnostics import from_exception, from_syntax_error

    path = _private_workdir() / LEARNER_FILE
    path.write_text(request["source"])
    try:
        module = import_learner_module(path, "answer", kernel_file=False)
    except SyntaxError as exc:
        writer.send(
            {"type": "compile_error", "message": str(exc.msg), "diagnostics": [from_syntax_error(exc).model_dump()]}
        )
        return
    except BaseException as exc:
        diagnostic = from_exception(exc, str(path))
        writer.send({"type": "runtime_error", "message": diagnostic.message, "diagnostics": [diagnostic.model_dump()]})
        return
    function = getattr(module, request["entry"], None)
    if not callable(function):
        writer.send({"type": "runtime_error", "message": f"{LEARNER_FILE} defines no function {request['entry']}()"})
        return
    answers: list[Any] = []
    for index, arguments in enumerate(request["calls"]):
        try:
            answers.append(plain(function(*(SimpleNamespace(**a) for a in arguments))))
        except BaseException as exc:
            if answers:
                writer.send({"type": "answers", "answers": answers})
            diagnostic = from_exception(exc, str(path))
            writer.send(
                {
                    "type": "runtime_error",
                    "index": index,
                    "message": diagnostic.message,
                    "diagnostics": [diagnostic.model_dump()],
                }
            )
            return
        if len(answers) == CHUNK:
            writer.send({"type": "answers", "answers": answers})
            answers = []
    if answers:
        writer.send({"type": "answers", "answers": answers})
    writer.send({"type": "finished"})


def main(argv: list[str]) -> int:
    request_fd, message_fd = int(argv[0]), int(argv[1])
    os.set_inheritable(message_fd, False)
    writer = MessageWriter(message_fd)
    pid = os.getpid()
    try:
        request = _read_request(request_fd)
        _drop_privileges(request.get("drop_uid"), request.get("drop_gid"))
        writer.send({"type": "hello", "pid": pid, "uid": os.getuid(), "gid": os.getgid()})
        _run(writer, request)
    except BaseException as exc:  # ours, not the learner's
        if os.getpid() != pid:
            os._exit(0)
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            detail += f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})"
        with contextlib.suppress(OSError):
            writer.send({"type": "error", "message": f"the function's child failed: {detail}"[:2000]})
        return 1
    if os.getpid() != pid:
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
