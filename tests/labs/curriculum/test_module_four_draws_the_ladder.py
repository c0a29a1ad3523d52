"""Module 4's page draws the softmax ladder from the newest committed measurement, or says there is none yet.

The measurement is a small document of bench/softmax_ladder.py's shape, written into a
results folder of the test's own; nothing here is a GPU's number.
"""

from __future__ import annotations

import json
import re

import pytest

from labs.curriculum.lessons import toolchain
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db


def ladder_document(device: str = "NVIDIA H200", date: str = "2026-12-06T19:00:00Z") -> dict:
    """Two rungs timed at one size, one that could not run: what bench/softmax_ladder.py writes."""
    return {
        "device": device,
        "date": date,
        "commit": "abc1234",
        "roof": {"bytes_per_s": 4.2e12, "source": "device-to-device copy bandwidth measured by gpu_worker calibrate"},
        "rungs": [
            {"rung": "hand-written CUDA C++: online, two passes", "loc": 28, "status": "ran"},
            {"rung": "Triton: one program per row", "loc": 12, "status": "ran"},
            {
                "rung": "CUTLASS Python DSL (CuTe DSL)",
                "loc": None,
                "status": "not runnable in the worker's image",
                "why": "nvidia-cutlass-dsl is not installed there",
            },
        ],  # fmt: skip
        "results": [
            {
                "rung": "hand-written CUDA C++: online, two passes",
                "rows": 16384,
                "cols": 4096,
                "median_us": 160.0,
                "bandwidth_gbs": 3355.4,
                "roof_pct": 79.9,
            },
            {
                "rung": "Triton: one program per row",
                "rows": 16384,
                "cols": 4096,
                "median_us": 140.0,
                "bandwidth_gbs": 3834.8,
                "roof_pct": 91.3,
            },
        ],  # fmt: skip
    }


def _ladder_figure(page: str) -> dict:
    match = re.search(r'<script id="lesson-figures" type="application/json">(.*?)</script>', page, re.S)
    assert match, "no lesson figures on the page"
    return next(f["figure"] for f in json.loads(match.group(1)) if f["name"] == "toolchain-ladder")


def test_alice_sees_each_rungs_time_lines_and_roof_with_the_device_and_date(alice, labs_loaded, tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "RESULTS", tmp_path)
    (tmp_path / "2026-12-06-run23-softmax-ladder.json").write_text(json.dumps(ladder_document()))
    figure = _ladder_figure(client_for(alice).get("/modules/toolchain/").content.decode())
    source = figure["layout"]["meta"]["source"]
    assert "NVIDIA H200, 2026-12-06, commit abc1234" in source and "2026-12-06-run23-softmax-ladder.json" in source
    assert "4200 GB/s" in source
    time, lines, roof = figure["data"]
    assert time["y"] == lines["y"] == roof["y"]
    assert time["y"][-1] == "CUTLASS Python DSL (CuTe DSL)"  # the top of the ladder is drawn last
    assert time["text"] == ["160 us", "140 us", ""] and lines["text"] == ["28", "12", ""]
    assert roof["text"] == ["80%", "91%", ""]
    said = [a["text"] for a in figure["layout"]["annotations"]]
    assert "not runnable in the worker's image: nvidia-cutlass-dsl is not installed there" in said


def test_the_newest_measurement_is_the_one_drawn(alice, labs_loaded, tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "RESULTS", tmp_path)
    (tmp_path / "2026-12-06-run23-softmax-ladder.json").write_text(json.dumps(ladder_document("NVIDIA H100")))
    (tmp_path / "2026-12-07-run24-softmax-ladder.json").write_text(json.dumps(ladder_document("NVIDIA H200")))
    figure = _ladder_figure(client_for(alice).get("/modules/toolchain/").content.decode())
    assert "NVIDIA H200" in figure["layout"]["meta"]["source"]


def test_without_a_committed_measurement_the_ladder_says_there_is_none_yet(alice, labs_loaded, tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "RESULTS", tmp_path)
    (tmp_path / "2026-12-06-softmax-ladder.json").write_text("{not json")
    figure = _ladder_figure(client_for(alice).get("/modules/toolchain/").content.decode())
    assert figure["layout"]["meta"]["source"] == "not yet measured"
    assert figure["data"] == []
    assert figure["layout"]["annotations"][0]["text"].startswith("no measurement yet")
