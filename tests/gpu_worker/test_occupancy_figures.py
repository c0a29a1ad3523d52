"""The occupancy calculator's three graphs: Plotly JSON that marks the submission and says where it came from."""

from __future__ import annotations

import json

import pytest

from gpu_worker.figures.occupancy import occupancy_figures

SOURCE = "NVIDIA H200 (sm_90), full GPU"


@pytest.mark.parametrize("arch", ["sm_90", "sm_75", "gfx942"])
def test_there_are_three_figures_with_the_submission_marked_and_the_source_named(arch: str) -> None:
    figures = occupancy_figures(arch, 256, 40, 12_000, SOURCE)
    assert len(figures) == 3
    json.dumps(figures)  # JSON all the way down
    for entry, value in zip(figures, (256, 40, 12_000), strict=True):
        fig = entry["figure"]
        assert set(fig) >= {"data", "layout"}
        assert arch in entry["title"] and SOURCE in entry["title"]
        assert (
            SOURCE in fig["layout"]["title"]["subtitle"]["text"].replace("<br>", " ")
            and fig["layout"]["meta"]["source"] == SOURCE
        )
        (point,) = [t for t in fig["data"] if t.get("name") == "this submission"]
        assert point["x"] == [value] and point["marker"]["symbol"] == "star"
        assert any(a.get("text", "").startswith("this submission") for a in fig["layout"]["annotations"])


def test_the_sweeps_cover_the_calculators_ranges_and_the_point_sits_on_its_curve() -> None:
    threads, regs, shared = occupancy_figures("sm_90", 256, 40, 12_000, "simulator: sm_90 what-if")
    curve = threads["figure"]["data"][0]
    assert curve["x"][0] == 32 and curve["x"][-1] == 1024
    assert regs["figure"]["data"][0]["x"][0] == 1 and regs["figure"]["data"][0]["x"][-1] == 255
    assert shared["figure"]["data"][0]["x"][0] == 0 and shared["figure"]["data"][0]["x"][-1] == 227 * 1024
    # 40 registers: 1,280 a warp, 48 warps an SM, 6 blocks of 256 threads: 75%.
    assert threads["figure"]["data"][1]["y"] == [75.0]
    assert "at the largest carveout" in threads["figure"]["layout"]["meta"]["carveout"]


def test_amd_figures_are_labelled_what_ifs_and_a_launch_that_cannot_happen_says_so() -> None:
    figures = occupancy_figures("gfx942", 1024, 200, 0, "simulator: gfx942 what-if")
    assert all("what-if" in f["title"] for f in figures)
    notes = [a["text"] for a in figures[0]["figure"]["layout"]["annotations"]]
    assert "this submission: cannot launch" in notes
