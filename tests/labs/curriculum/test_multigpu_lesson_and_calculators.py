"""Module 5's lesson page draws its model figures, and the calculators redraw them for a learner's values.

Bad parameters answer 400 with the field and the reason; every figure says it is a model.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db

URL = "/modules/multi-gpu/calculators/"


def _figures(page: str) -> list[dict]:
    match = re.search(r'<script id="lesson-figures" type="application/json">(.*?)</script>', page, re.S)
    assert match, "no figures on the page"
    return json.loads(match.group(1))


def test_alice_reads_module_fives_lesson_with_six_model_figures(alice, labs_loaded):
    page = client_for(alice).get("/modules/multi-gpu/").content.decode()
    assert "Megatron-LM: two all-reduces per layer" in page
    figures = _figures(page)
    assert [f["name"] for f in figures] == [
        "multigpu-collective-time",
        "multigpu-collective-busbw",
        "multigpu-tensor-parallel",
        "multigpu-data-parallel",
        "multigpu-bubble",
        "multigpu-activation-memory",
    ]
    assert all(f["figure"]["layout"]["meta"]["label"] == "model" for f in figures)
    for slug in ("ring-reduce-scatter", "ring-all-gather", "tensor-parallel-mlp", "pipeline-1f1b"):
        assert f'href="/exercises/{slug}/"' in page


def test_the_calculators_draw_every_figure_as_a_model_with_its_defaults(alice):
    response = client_for(alice).get(URL)
    assert response.status_code == 200
    figures = _figures(response.content.decode())
    assert len(figures) == 6
    assert all("(model)" in f["figure"]["layout"]["title"]["text"] for f in figures)
    assert all("model:" in f["figure"]["layout"]["meta"]["source"] for f in figures)


def test_alices_values_change_the_figures(alice):
    page = client_for(alice).get(URL, {"coll-gpus": "16", "coll-collective": "all_gather", "pipe-stages": "4"})
    figures = _figures(page.content.decode())
    assert figures[0]["figure"]["layout"]["title"]["text"].startswith("all-gather time among 16 GPUs")
    assert "p = 4 stages" in figures[2]["figure"]["layout"]["title"]["text"]


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"coll-gpus": "1"}, "GPUs"),
        ({"pipe-stages": "many"}, "pipeline stages p"),
        ({"coll-smallest": "4096", "coll-largest": "8"}, "smallest message must not be larger"),
        ({"tp-efficiency": "2"}, "share of the BF16 peak"),
    ],
)
def test_a_bad_value_is_a_400_that_names_it(alice, query, words):
    response = client_for(alice).get(URL, query)
    assert response.status_code == 400
    page = response.content.decode()
    assert words in page
    assert _figures(page) == []


def test_the_calculators_need_a_login(client):
    assert client.get(URL).status_code == 302
