"""A learner's progress per exercise and module, read from their runs: not tried, tried, solved, fast.

`solved`: a run was accepted; `fast`: an accepted run also met every goal the backend could judge
(`result.goals_met`, from `gpu_worker.exercise.goals`); `tried`: runs, none accepted. Read-only: nothing here
changes state. The states are ordered, so a better run always wins and a new state slots in by rank.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from labs.models import Exercise, Submission
from labs.models.run import Verdict

NOT_TRIED, TRIED, SOLVED, FAST = "not_tried", "tried", "solved", "fast"
RANK = {NOT_TRIED: 0, TRIED: 1, SOLVED: 2, FAST: 3}
WORDS = {NOT_TRIED: "not tried", TRIED: "tried", SOLVED: "solved", FAST: "solved, fast"}


def run_state(verdict: str, goals_met: Any) -> str:
    """The state one finished run earns."""
    if verdict != Verdict.ACCEPTED:
        return TRIED
    return FAST if goals_met is True else SOLVED


def exercise_states(user: Any, exercises: Iterable[Exercise] | None = None) -> dict[int, str]:
    """Exercise id -> the best state of the learner's runs (exercises without runs are left out)."""
    runs = Submission.objects.filter(owner=user)
    if exercises is not None:
        runs = runs.filter(exercise__in=list(exercises))
    best: dict[int, str] = {}
    for exercise_id, verdict, goals_met in runs.values_list("exercise_id", "verdict", "result__goals_met"):
        state = run_state(verdict or "", goals_met)
        if RANK[state] > RANK[best.get(exercise_id, NOT_TRIED)]:
            best[exercise_id] = state
    return best


@dataclass(frozen=True)
class ExerciseProgress:
    exercise: Exercise
    state: str

    @property
    def words(self) -> str:
        return WORDS[self.state]


@dataclass(frozen=True)
class ModuleProgress:
    module: Any
    exercises: list[ExerciseProgress]

    @property
    def solved(self) -> int:
        return sum(RANK[e.state] >= RANK[SOLVED] for e in self.exercises)

    @property
    def words(self) -> str:
        total = len(self.exercises)
        return f"{self.solved} of {total} solved" if total else ""


def modules_progress(user: Any, modules: Iterable[Any]) -> list[ModuleProgress]:
    """Each module with its published exercises and the learner's state on each, in the modules' order."""
    modules = list(modules)
    exercises = {m.pk: list(m.exercises.visible_to(user)) for m in modules}
    states = exercise_states(user, [e for es in exercises.values() for e in es])
    return [
        ModuleProgress(m, [ExerciseProgress(e, states.get(e.pk, NOT_TRIED)) for e in exercises[m.pk]]) for m in modules
    ]


def next_exercise(exercise: Exercise, user: Any) -> Exercise | None:
    """The exercise `user` sees after this one in the course order (module number, then order), or None."""
    ordered = list(Exercise.objects.visible_to(user).select_related("module"))
    for i, candidate in enumerate(ordered):
        if candidate.pk == exercise.pk:
            return ordered[i + 1] if i + 1 < len(ordered) else None
    return None
