"""Module 4's lesson: its figures build and say where their numbers came from."""

from __future__ import annotations

import json
from pathlib import Path

from labs.curriculum.lessons import toolchain
from labs.curriculum.lessons.registry import LessonContext, figure_names, registered

LESSON = Path(__file__).resolve().parents[3] / "labs" / "content" / "04-toolchain" / "lesson.md"


def test_every_figure_the_lesson_names_is_registered():
    assert set(figure_names(LESSON.read_text())) <= registered()


def test_the_traffic_figure_is_labelled_a_model():
    figure = toolchain.softmax_traffic(LessonContext())
    assert "a model" in figure["layout"]["meta"]["source"]
    assert [bar for bar in figure["data"][0]["text"]] == ["16 B/element", "12 B/element", "8 B/element"]


def test_the_measured_figure_names_its_device_and_date_or_says_not_yet_measured(tmp_path, monkeypatch):
    document = toolchain.newest_ladder()
    figure = toolchain.softmax_measured(LessonContext())
    if document is not None:
        assert document["device"] in figure["layout"]["meta"]["source"]
    monkeypatch.setattr(toolchain, "RESULTS", tmp_path)
    (tmp_path / "2026-01-01-softmax-ladder.json").write_text(json.dumps({"results": []}))
    assert toolchain.softmax_measured(LessonContext())["layout"]["meta"]["source"] == "not yet measured"


def test_the_measured_ladder_is_looked_for_in_bench_results():
    assert toolchain.RESULTS.is_dir() and toolchain.RESULTS.parts[-2:] == ("bench", "results")
