"""Module 2's page draws latency hiding (Little's law, a model) and links the occupancy exercise."""

from __future__ import annotations

import json
import re

import pytest

from labs.curriculum.lessons.registry import LessonContext
from labs.curriculum.lessons.three_rules import bandwidth_percent, latency_hiding
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db


def test_sixteen_loads_in_flight_fill_the_bandwidth_at_a_quarter_of_the_warps_that_one_load_cannot():
    assert bandwidth_percent(16, 16) == 100
    assert bandwidth_percent(16, 1) < 10
    assert bandwidth_percent(64, 1) < 50
    assert 70 < bandwidth_percent(64, 2) < 80  # vector-add's 8 bytes per thread; an H200 measured 71%


def test_the_figure_is_labelled_a_model_with_a_curve_per_loads_in_flight():
    figure = latency_hiding(LessonContext())
    assert [t["name"] for t in figure["data"]] == [
        "1 load in flight per thread",
        "4 loads in flight per thread",
        "16 loads in flight per thread",
    ]
    assert "a model, not a measurement" in figure["layout"]["meta"]["source"]


def test_alice_reads_module_twos_lesson_with_the_figure_and_the_occupancy_exercise(alice, labs_loaded):
    page = client_for(alice).get("/modules/three-rules/").content.decode()
    match = re.search(r'<script id="lesson-figures" type="application/json">(.*?)</script>', page, re.S)
    assert match is not None
    assert "latency-hiding" in [f["name"] for f in json.loads(match.group(1))]
    assert 'href="/exercises/occupancy/"' in page
