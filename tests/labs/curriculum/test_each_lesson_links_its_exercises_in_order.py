"""Each module's lesson links every exercise of its module, first mention in the module's order (issue 28).

A student reaches each exercise from the lesson, in the order the module's `lab.yaml` files give. Reads the
lab folders only: no database, no worker.
"""

from __future__ import annotations

import re

import pytest

from gpu_worker.exercise.labspec import load_all

MODULES, LABS = load_all()
LINK = re.compile(r"\(/exercises/([a-z0-9-]+)/\)")


def _exercises(module_slug: str) -> list[str]:
    labs = [lab for lab in LABS if lab.module.slug == module_slug]
    return [lab.spec.slug for lab in sorted(labs, key=lambda lab: lab.spec.order)]


def _first_links(lesson: str, slugs: list[str]) -> list[str]:
    seen: list[str] = []
    for slug in LINK.findall(lesson):
        if slug in slugs and slug not in seen:
            seen.append(slug)
    return seen


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.slug)
def test_the_lesson_links_every_exercise_of_its_module_in_order(module):
    exercises = _exercises(module.slug)
    assert module.lesson, f"module {module.slug} has no lesson.md"
    linked = _first_links(module.lesson, exercises)
    assert linked == exercises, f"{module.slug}: the lesson first links {linked}, the module's order is {exercises}"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.slug)
def test_the_lesson_links_no_exercise_that_does_not_exist(module):
    known = {lab.spec.slug for lab in LABS}
    assert set(LINK.findall(module.lesson or "")) <= known


def test_a_lesson_that_skips_or_reorders_an_exercise_is_caught():
    lesson = "First [b](/exercises/b/), then [a](/exercises/a/); [a again](/exercises/a/)."
    assert _first_links(lesson, ["a", "b", "c"]) == ["b", "a"]
