"""The registry of trusted references a function exercise can name (`function: {grader: ...}` in lab.yaml).

A grader turns the lab's cases into the calls the learner's function gets (each a
list of arguments, each argument a mapping of scalars), computes its own answer for
each call, and judges an answer against it with a sentence the learner reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gpu_worker.answers import architectures


@dataclass(frozen=True)
class Judged:
    """One answer against the reference's: whether it is right, and what to tell the learner."""

    passed: bool
    label: str  # the case in a few words ("256 threads, 64 registers, 0 B shared on H100 (sm_90)")
    message: str


class Grader(Protocol):
    def calls(self, cases: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]: ...

    def judge(self, call: list[dict[str, Any]], answer: Any) -> Judged: ...


class _Architectures:
    """Module 1's `architectures` exercise: resident warps (wavefronts) per SM (CU, WGP) and what limits them."""

    def calls(self, cases: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
        return architectures.calls(cases)

    def judge(self, call: list[dict[str, Any]], answer: Any) -> Judged:
        passed, label, message = architectures.judge(call[0], call[1], answer)
        return Judged(passed, label, message)


GRADERS: dict[str, Grader] = {"architectures": _Architectures()}


def get_grader(name: str) -> Grader:
    try:
        return GRADERS[name]
    except KeyError:
        raise ValueError(f"no grader called {name!r} (there are {', '.join(GRADERS)})") from None
