"""The module list shows each exercise as not tried, tried, solved or solved fast, from the learner's own runs."""

import re

import pytest
from django.contrib.auth.models import AnonymousUser

from labs.models import Exercise
from labs.runs import progress
from tests.labs.factories import client_for, make_run

pytestmark = pytest.mark.django_db


def _state(page: str, slug: str) -> str:
    match = re.search(rf'id="exercise-{slug}" data-progress="(\w+)"', page)
    assert match, slug
    return match.group(1)


def test_alice_sees_solved_tried_and_not_tried_and_bob_sees_only_his_own(alice, bob, labs_loaded):
    make_run(alice, exercise="vector-add", verdict="wrong_answer", result={})
    make_run(alice, exercise="vector-add", verdict="accepted", result={})
    make_run(alice, exercise="coalescing", verdict="compile_error", result={})
    page = client_for(alice).get("/").content.decode()
    assert _state(page, "vector-add") == "solved"
    assert _state(page, "coalescing") == "tried"
    assert _state(page, "transpose") == "not_tried"
    assert re.search(r'data-solved="1">1 of \d+ solved', page)
    assert _state(client_for(bob).get("/").content.decode(), "vector-add") == "not_tried"


def test_an_accepted_run_that_met_its_goals_is_fast_and_a_later_slow_one_does_not_undo_it(alice, labs_loaded):
    make_run(alice, exercise="coalescing", verdict="accepted", result={"goals_met": True})
    make_run(alice, exercise="coalescing", verdict="accepted", result={"goals_met": False})
    page = client_for(alice).get("/").content.decode()
    assert _state(page, "coalescing") == "fast"
    assert "solved, fast" in page


def test_the_next_exercise_follows_the_course_order(labs_loaded):
    after = progress.next_exercise(Exercise.objects.get(slug="vector-add"), AnonymousUser())
    assert after is not None and after.module.number >= 1 and after.slug != "vector-add"
    last = list(Exercise.objects.filter(published=True))[-1]
    assert progress.next_exercise(last, AnonymousUser()) is None
