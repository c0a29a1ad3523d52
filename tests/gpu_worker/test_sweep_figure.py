"""An exercise's sweep draws its measured quantity against the declared parameter, one point per timed size.

The metrics are `work_metrics` over stated times, as the cuda backend computes them.
"""

from __future__ import annotations

from gpu_worker.exercise.labspec import find_lab
from gpu_worker.figures.sweep import sweep_figure, sweep_points
from gpu_worker.science.metrics import Ceilings, work_metrics


def _timed(lab, seconds: list[float]) -> dict[int, dict]:
    work, sizes = lab.spec.work, lab.spec.sizes["cuda"]
    return {i: work_metrics(work, s, t).model_dump() for i, (s, t) in enumerate(zip(sizes, seconds, strict=True))}


def test_the_latency_staircase_is_ns_per_dependent_load_against_the_working_set():
    lab = find_lab("pointer-chase")
    metrics = _timed(lab, [4096 * 30e-9, 65536 * 250e-9, 65536 * 700e-9])
    points = sweep_points(lab.spec.sweep, metrics)
    assert [x for x, _ in points] == [32768, 4 * 1048576, 4 * 67108864]
    assert [round(y) for _, y in points] == [30, 250, 700]
    figure = sweep_figure(lab.spec.sweep, metrics, "NVIDIA H200, cuda backend")
    assert figure["layout"]["title"]["text"] == "Latency staircase · NVIDIA H200, cuda backend"
    assert figure["layout"]["xaxis"]["type"] == "log"


def test_an_untimed_or_single_point_sweep_draws_nothing():
    lab = find_lab("pointer-chase")
    assert sweep_figure(lab.spec.sweep, _timed(lab, [1e-4, 0, 0]), "x") is None


def test_the_occupancy_sweep_is_bandwidth_against_resident_warps_drawn_in_order_of_warps():
    lab = find_lab("occupancy")
    n = lab.spec.sizes["cuda"][0]["n"]
    ceilings = Ceilings(source="measured", copy_bandwidth=4.0e12, fp32=60e12)
    rates = (2.0, 1.0, 2.6, 3.0, 3.2, 3.3)  # TB/s, in the lab's size order (16 warps first)
    metrics = {
        i: work_metrics(lab.spec.work, s, 8 * n / (rate * 1e12), ceilings).model_dump()
        for i, (s, rate) in enumerate(zip(lab.spec.sizes["cuda"], rates, strict=True))
    }
    points = sweep_points(lab.spec.sweep, metrics)
    assert [x for x, _ in points] == [8, 16, 24, 32, 48, 64]
    assert [round(y) for _, y in points] == [25, 50, 65, 75, 80, 82]


def test_the_occupancy_sweep_draws_each_point_at_the_warps_the_driver_kept():
    lab = find_lab("occupancy")
    n = lab.spec.sizes["cuda"][0]["n"]
    ceilings = Ceilings(source="measured", copy_bandwidth=4.0e12, fp32=60e12)
    metrics = {
        i: work_metrics(lab.spec.work, s, 8 * n / 3.0e12, ceilings).model_dump()
        for i, s in enumerate(lab.spec.sizes["cuda"])
    }
    blocks = [2, 1, 3, 4, 6, 6]  # 40 registers per thread: the register file stops the 8-block size at 6
    occupancies = {i: {"driver_blocks_per_sm": b, "threads_per_block": 256} for i, b in enumerate(blocks)}
    del occupancies[3]  # a size whose occupancy was not measured falls back to the formula (32 warps)
    points = sweep_points(lab.spec.sweep, metrics, occupancies)
    assert [x for x, _ in points] == [8, 16, 24, 32, 48, 48]
