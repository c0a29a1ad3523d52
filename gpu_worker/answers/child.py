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

import sys
from types import SimpleNamespace
from typing import Any

from gpu_worker.isolation.learner_python import load_entry, serve
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
    from gpu_worker.exercise.diagnostics import from_exception

    loaded = load_entry(writer, request, LEARNER_FILE)
    if loaded is None:
        return
    function, path = loaded
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
    return serve(argv, _run, "function's")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
