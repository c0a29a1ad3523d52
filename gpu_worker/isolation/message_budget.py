"""How many messages of each type a job's child may send: as many as an honest child does, and no more.

The child shares its process with the learner's code, which can write to the
message pipe. Without bounds, thousands of forged `memory` or `compiled`
messages became thousands of events, stored in the result and sent again on
every read. An honest child sends one `hello`, one `compiled` (or one verdict),
one `outputs`, `memory`, `occupancy`, `timing` and `profiled` per size, one
`listing` and one `finished`; the budget allows exactly that per type, plus a
small total for anything else. Going over is the learner's `runtime_error`,
said plainly, never an infrastructure error. `max_message_bytes` bounds the
bytes the same way: every size's outputs, and a fixed allowance for the rest.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from gpu_worker.exercise.inputs import shape_of
from gpu_worker.protocol import ArgSpec

PER_JOB = {
    "hello": 1,
    "compiled": 1,
    "listing": 1,
    "compile_answer": 1,  # a GPU job's compile, for the engine's compile cache (`backends.compile_cache`)
    "finished": 1,
    "not_run": 1,
    "compile_error": 1,
    "rejected": 1,
    "runtime_error": 1,
    "timeout": 1,  # the PTX executor's instruction budget: an endless kernel, ended before the wall clock
    "error": 1,
}
PER_SIZE = ("outputs", "memory", "occupancy", "timing", "profiled")
OTHER_MESSAGES = 16  # types this engine does not know, from a newer child: read, counted, ignored


class OverBudget(Exception):
    """The child sent more messages than a job of this many sizes needs; the message says which, plainly."""


class Budget:
    """Counts one job's messages by type and refuses the first one over its type's allowance."""

    def __init__(self, sizes: int):
        self.allowed = {**PER_JOB, **{kind: max(1, sizes) for kind in PER_SIZE}}
        self.allowed["checked"] = 2 * max(1, sizes)  # the GPU's measuring process: the checked and the timed launches
        self.seen: Counter[str] = Counter()
        self.total = 0

    def count(self, kind: str) -> None:
        self.seen[kind] += 1
        self.total += 1
        allowed = self.allowed.get(kind)
        if allowed is None:
            others = sum(n for k, n in self.seen.items() if k not in self.allowed)
            if others > OTHER_MESSAGES:
                raise OverBudget(f"your program sent more than {OTHER_MESSAGES} messages of unknown types")
        elif self.seen[kind] > allowed:
            raise OverBudget(f"your program sent more than {allowed} {kind!r} message{'s' if allowed > 1 else ''}")

    @property
    def events_most(self) -> int:
        """An upper bound of the messages of an honest job: the fixed event budget."""
        return sum(self.allowed.values()) + OTHER_MESSAGES


def max_message_bytes(args: list[ArgSpec], runs: list[dict[str, Any]]) -> int:
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
