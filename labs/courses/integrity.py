"""Code similarity among a course's submissions, for the instructor to read; nothing is decided from it.

copydetect fingerprints each student's newest run of an exercise in the assignment's window (winnowed
k-grams of the tokenised code, names abstracted), with the exercise's starter code given as boilerplate so
what everyone was handed never counts. Pairs come back with their similarity and the matching lines.
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from labs.courses import access
from labs.models import AssignmentExercise, Submission

if TYPE_CHECKING:
    from copydetect import CodeFingerprint

NOISE_TOKENS = 25  # copydetect's default k: matches shorter than this are noise
WINDOW = 1
SUFFIX = {"numba": "py", "cuda": "cu"}
LANGUAGE = {"numba": "python", "cuda": "cuda"}


@dataclass
class Side:
    username: str
    submission_id: int
    similarity: float
    lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, text) of copied code


@dataclass
class Pair:
    exercise: str
    language: str
    left: Side
    right: Side

    @property
    def similarity(self) -> float:
        return max(self.left.similarity, self.right.similarity)


def _fingerprint(name: str, source: str, language: str, boilerplate: list[int] | None = None) -> CodeFingerprint:
    from copydetect import CodeFingerprint  # imported when an instructor asks: it brings matplotlib and NumPy

    return CodeFingerprint(
        f"{name}.{SUFFIX[language]}",
        NOISE_TOKENS,
        WINDOW,
        boilerplate=boilerplate,
        language=LANGUAGE[language],
        fp=io.StringIO(source),
    )


def _lines(source: str, slices, handed_out: set[str]) -> list[tuple[int, str]]:
    """The source lines that copied character ranges touch, numbered from 1, but for lines of the starter
    (a match reaching across from the learner's code into the starter's would otherwise show them)."""
    starts = [0]
    for n, ch in enumerate(source):
        if ch == "\n":
            starts.append(n + 1)
    touched: set[int] = set()
    for start, end in zip(slices[0], slices[1], strict=False):
        first = sum(1 for s in starts if s <= int(start))
        last = sum(1 for s in starts if s < int(end))
        touched.update(range(first, last + 1))
    text = source.split("\n")
    shown = [(n, text[n - 1]) for n in sorted(touched) if 0 < n <= len(text) and text[n - 1].strip()]
    return [(n, line) for n, line in shown if line.strip() not in handed_out]


def latest_sources(item: AssignmentExercise) -> list[Submission]:
    """Each student's newest run of the exercise since the release, one per student and language."""
    chosen = []
    for student in access.students(item.assignment.course):
        runs = Submission.objects.filter(
            owner=student, exercise=item.exercise, created_at__gte=item.assignment.release_at, regrade_of__isnull=True
        ).order_by("-created_at", "-id")
        seen = set()
        for run in runs:
            if run.language not in seen:
                seen.add(run.language)
                chosen.append(run)
    return chosen


def pairs(item: AssignmentExercise, threshold: float = 0.3) -> list[Pair]:
    """Pairs of students whose code overlaps beyond `threshold` of either's fingerprinted tokens, most first."""
    from copydetect import compare_files

    found = []
    runs = latest_sources(item)
    for language in sorted({r.language for r in runs} & set(SUFFIX)):
        mine = [r for r in runs if r.language == language]
        starter = (item.exercise.starters or {}).get(language, "")
        boilerplate = list(_fingerprint("starter", starter, language).hashes) if starter else None
        handed_out = {line.strip() for line in starter.splitlines()}
        prints = {r.pk: _fingerprint(f"s{r.pk}", r.source, language, boilerplate) for r in mine}
        for a, b in itertools.combinations(mine, 2):
            overlap, (sim_a, sim_b), (slices_a, slices_b) = compare_files(prints[a.pk], prints[b.pk])
            if overlap == 0 or max(sim_a, sim_b) < threshold:
                continue
            found.append(
                Pair(
                    exercise=item.exercise.slug,
                    language=language,
                    left=Side(a.owner.get_username(), a.pk, float(sim_a), _lines(a.source, slices_a, handed_out)),
                    right=Side(b.owner.get_username(), b.pk, float(sim_b), _lines(b.source, slices_b, handed_out)),
                )
            )
    return sorted(found, key=lambda p: -p.similarity)
