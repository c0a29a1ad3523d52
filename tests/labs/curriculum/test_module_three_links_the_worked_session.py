"""Module 3's page links mixed precision and the worked optimisation, and its roofline places the float16 dot."""

from __future__ import annotations

import pytest

from labs.curriculum.lessons.registry import LessonContext
from labs.curriculum.lessons.roofline import kernels
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db


def test_alice_finds_both_new_exercises_on_module_threes_page(alice, labs_loaded):
    page = client_for(alice).get("/modules/roofline/").content.decode()
    assert "Mixed precision" in page and "A worked optimisation session" in page
    assert 'href="/exercises/mixed-precision/"' in page
    assert 'href="/exercises/matmul-register-tiles/"' in page


def test_the_roofline_figure_marks_the_float16_dot_at_half_a_flop_per_byte():
    figure = kernels(LessonContext())
    layout = figure["layout"]
    marks = {a["text"]: s["x0"] for a, s in zip(layout["annotations"], layout["shapes"], strict=True)}
    assert marks["float16 dot: 2/4"] == 0.5
