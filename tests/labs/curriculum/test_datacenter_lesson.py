"""Module 6's lesson: its figures build, the sharing figures read the committed measurement or say none exists."""

from __future__ import annotations

import json
from pathlib import Path

from labs.curriculum.lessons import datacenter
from labs.curriculum.lessons.registry import LessonContext, figure_names, registered

LESSON = Path(__file__).resolve().parents[3] / "labs" / "content" / "06-datacenter" / "lesson.md"


def test_every_figure_the_lesson_names_is_registered_and_builds():
    names = figure_names(LESSON.read_text())
    assert set(names) <= registered()
    for name in names:
        figure = getattr(
            datacenter,
            {
                "datacenter-utilisation": "utilisation",
                "datacenter-jct": "jct",
                "sharing-throughput": "sharing_throughput",
                "sharing-noisy-neighbour": "noisy_neighbour",
            }[name],
        )(LessonContext())
        assert figure["data"], name
        assert figure["layout"]["meta"]["source"]


def test_the_sharing_figures_name_the_device_and_date_they_were_measured_on():
    document = datacenter.newest_sharing_results()
    assert document is not None and not document["dry_run"]
    source = datacenter.sharing_throughput(LessonContext())["layout"]["meta"]["source"]
    assert document["device"] in source and document["date"][:10] in source


def test_without_a_measurement_the_sharing_figure_says_not_yet_measured(tmp_path, monkeypatch):
    (tmp_path / "2026-01-01-sharing.json").write_text(json.dumps({"dry_run": True, "summary": [{"mode": "whole"}]}))
    monkeypatch.setattr(datacenter, "RESULTS", tmp_path)
    figure = datacenter.noisy_neighbour(LessonContext())
    assert figure["layout"]["meta"]["source"] == "not yet measured"
