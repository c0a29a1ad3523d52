"""On a GPU, a learner's block-size sweep checks and times the kernel at every block size the lab offers and
draws the curve; the verdict and the exercise's own sizes are what they are without it."""

from __future__ import annotations

import pytest

from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Event, Job

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("language", ["cuda", "numba"])
def test_the_vector_add_reference_swept_over_every_block_size_draws_six_correct_points(language):
    lab = find_lab("vector-add")
    choices = lab.spec.harness().launch_choices
    assert choices is not None
    job = Job(
        submission_id=71_000 + len(language),
        exercise=lab.exercise_ref(language),
        source=lab.references[language],
        launch=choices.launch(256, sweep=True),
        requested_by="alice",
    )
    events: list[Event] = []
    result = run_job(job, events.append, backend="cuda")
    assert result.verdict == "accepted", result.message
    assert [e.type for e in events].count("timing") == len(lab.spec.sizes["cuda"])  # the points send none
    assert len(result.metrics["sizes"]) == len(lab.spec.sizes["cuda"])
    # a figure is either plotly's own document or {title, figure} around it (the roofline): the page draws both
    layouts = [(f.get("figure") or f).get("layout") or {} for f in result.figures]
    titled = {(lay.get("title") or {}).get("text", ""): lay for lay in layouts}
    curve = next(lay for title, lay in titled.items() if title.startswith("Your kernel across block"))
    points = curve["meta"]["points"]
    assert [p["block"] for p in points] == [32, 64, 128, 256, 512, 1024]
    assert all(p["correct"] and p["median_seconds"] > 0 for p in points)
    assert [p["chosen"] for p in points].count(True) == 1 and points[3]["chosen"]
    # one-warp blocks cap the SM at 32 resident blocks: half the warps of the 64 an H100/H200 SM holds
    assert points[0]["resident_warps"] < points[3]["resident_warps"]
