"""The figures built as plain JSON (`figures.plain`) are exactly what Plotly writes for them."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from gpu_worker.figures.occupancy import occupancy_figures
from gpu_worker.figures.roofline import bandwidth_figure, roofline_figure
from gpu_worker.protocol import RooflinePoint
from gpu_worker.science.datasheets import DATASHEETS
from gpu_worker.science.metrics import Ceilings

MEASURED = Ceilings(source="measured", copy_bandwidth=3.0e12, fp32=6.4e13, bf16_tensor=7.9e14)


def _point(intensity: float, rate: float, label: str) -> RooflinePoint:
    return RooflinePoint(intensity=intensity, flop_rate=rate, label=label)


FIGURES = {
    "occupancy, NVIDIA": lambda: occupancy_figures("sm_90", 1024, 64, 48000, "NVIDIA H100 (sm_90)")[1]["figure"],
    "occupancy, AMD": lambda: occupancy_figures("gfx942", 256, 32, 0, "simulator: gfx942 what-if")[0]["figure"],
    "roofline, not timed": lambda: roofline_figure("simulator", 0.25),
    "roofline, timed with history": lambda: roofline_figure(
        "H100",
        0.1,
        MEASURED,
        DATASHEETS["H100"],
        sizes=[_point(0.1, 1e11, "n = 1"), _point(0.12, 2e11, "n = 2")],
        history=[_point(0.2, 3e11, "#3")],
        reference=_point(0.5, 1e12, "reference"),
    ),
    "memory axis, not timed": lambda: bandwidth_figure("simulator", 1e9),
    "memory axis, timed": lambda: bandwidth_figure("H100", 1e9, MEASURED, DATASHEETS["H100"], sizes=[("n = 1", 1e12)]),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_plotly_reads_each_figure_back_as_the_same_json(name):
    figure = json.loads(json.dumps(FIGURES[name]()))
    assert json.loads(go.Figure(figure).to_json()) == figure  # every property one Plotly knows, written its way


def test_each_figure_has_its_own_template_copy():
    first, second = roofline_figure("simulator", 0.25), roofline_figure("simulator", 0.25)
    first["layout"]["template"]["layout"]["font"] = {"color": "red"}
    assert second["layout"]["template"]["layout"].get("font") != {"color": "red"}
