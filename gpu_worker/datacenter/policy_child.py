"""The sandboxed child of a scheduling exercise: run the learner's policy over each trace, send its decisions.

Started by `gpu_worker.isolation.sandbox` (`child_module`) as
`python -m gpu_worker.datacenter.policy_child REQUEST_FD MESSAGE_FD`. It reads
the request (`source`, `entry`, `rules`, and `traces` as rows
`[id, submit, gpus, duration]`), switches to uid 65534 when started as root,
imports the learner's file as `policy.py`, and for each trace runs the
simulator with the learner's function, sending:

- `hello`, then `compile_error` (a SyntaxError) or, per trace, `decisions`
  messages (chunks of the recorded decisions, in order) and `trace_done`;
- `runtime_error` when the learner's code raised (with the line), `invalid`
  when it answered something that is not a list of queued job ids;
- `finished` at the end.

It computes no metric and the engine believes none of it: the engine replays
the decisions in its own simulator, which checks every one of them. The
learner's code shares this process with the simulator, so it could read the
trace (future arrivals, hidden durations); that lets it schedule better, never
lets it report a schedule that could not happen.
"""

from __future__ import annotations

import sys
from typing import Any

from gpu_worker.isolation.learner_python import load_entry, serve
from gpu_worker.isolation.wire import MessageWriter

CHUNK = 1000  # decisions per message, so no message line nears the reader's limit
LEARNER_FILE = "policy.py"


def _run(writer: MessageWriter, request: dict[str, Any]) -> None:
    from gpu_worker.datacenter.simulate import Choice, InvalidDecision, Rules, Stalled, as_ids, simulate
    from gpu_worker.datacenter.trace import TraceJob
    from gpu_worker.exercise.diagnostics import from_exception

    loaded = load_entry(writer, request, LEARNER_FILE)
    if loaded is None:
        return
    choose, path = loaded
    rules = Rules(**request["rules"])
    for index, rows in enumerate(request["traces"]):
        trace = [TraceJob.from_list(r) for r in rows]
        decisions: list[list[Choice]] = []

        def recording(
            queue: list, free_gpus: int, now: float, decisions: list[list[Choice]] = decisions
        ) -> list[Choice]:
            ids = as_ids(choose(queue, free_gpus, now), {j.id for j in queue}, rules.sharing)
            decisions.append(ids)  # only valid ones: what was decided up to a failure is sent too
            return ids

        failure: dict[str, Any] | None = None
        try:
            simulate(trace, rules, recording)
        except InvalidDecision as exc:
            failure = {"type": "invalid", "message": str(exc)}
        except Stalled:
            pass  # the engine's replay stalls at the same place and says so itself
        except BaseException as exc:
            diagnostic = from_exception(exc, str(path))
            failure = {"type": "runtime_error", "message": diagnostic.message, "diagnostics": [diagnostic.model_dump()]}
        for start in range(0, len(decisions), CHUNK):
            writer.send({"type": "decisions", "index": index, "decisions": decisions[start : start + CHUNK]})
        if failure is not None:
            writer.send({**failure, "index": index})
            return
        writer.send({"type": "trace_done", "index": index})
    writer.send({"type": "finished"})


def main(argv: list[str]) -> int:
    return serve(argv, _run, "policy")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
