"""Bandwidth, FLOP/s and the roofline come from the exercise's declared work; a point above a roof is flagged."""

from gpu_worker.figures.roofline import roofline_figure
from gpu_worker.protocol import RooflinePoint, WorkSpec
from gpu_worker.science.datasheets import DATASHEETS, datasheet_for
from gpu_worker.science.metrics import Ceilings, work_metrics

VECTOR_ADD = WorkSpec(bytes="12 * n", flops="n")
H200 = Ceilings(source="measured on an H200", copy_bandwidth=4.27e12, fp32=60.6e12, bf16_tensor=793e12)


def test_vector_add_has_an_intensity_of_one_twelfth():
    m = work_metrics(VECTOR_ADD, {"n": 1 << 20})
    assert m.bytes == 12 * (1 << 20) and abs(m.intensity - 1 / 12) < 1e-12
    assert m.bandwidth is None and "FLOP/byte" in m.verdict


def test_a_timed_run_is_a_percentage_of_the_measured_copy_bandwidth():
    n = 1 << 24
    m = work_metrics(VECTOR_ADD, {"n": n}, median_seconds=12 * n / 4.0e12, ceilings=H200)
    assert abs(m.bandwidth - 4.0e12) < 1e3
    assert abs(m.bandwidth_pct - 100 * 4.0 / 4.27) < 1e-6
    assert not m.above_roof and "memory-bound" in m.verdict


def test_a_result_above_the_memory_roof_is_flagged_as_impossible():
    n = 1 << 24
    m = work_metrics(VECTOR_ADD, {"n": n}, median_seconds=12 * n / 6.0e12, ceilings=H200)
    assert m.above_roof and "above the roof" in m.verdict


def test_the_datasheet_is_found_by_the_device_name():
    assert datasheet_for("NVIDIA H200").memory_bandwidth == 4.8e12
    assert datasheet_for("Radeon 7900") is None


def test_the_roofline_names_its_source_and_marks_the_point():
    fig = roofline_figure(
        "NVIDIA H200, full GPU, cuda backend",
        1 / 12,
        H200,
        DATASHEETS["H200"],
        sizes=[RooflinePoint(intensity=1 / 12, flop_rate=330e9, label="n=16,777,213")],
        reference=RooflinePoint(intensity=1 / 12, flop_rate=340e9, label="reference"),
    )
    names = [t["name"] for t in fig["data"]]
    assert "this submission" in names and "reference" in names and "FP32 roof (datasheet)" in names
    assert "NVIDIA H200" in fig["layout"]["title"]["subtitle"]["text"]  # the source, under a title that fits
    assert "memory roof 4.27 TB/s (measured)" in names and "memory roof 4.8 TB/s (datasheet)" in names
    memory_roof = next(t for t in fig["data"] if t["name"] == "FP32 roof (measured)")
    knee = 60.6e12 / 4.27e12
    assert abs(memory_roof["x"][1] - knee) < 1e-9 and memory_roof["y"][2] == 60.6e12


def test_an_untimed_kernel_is_drawn_as_its_intensity_only():
    fig = roofline_figure("simulator (no timing)", 1 / 12, None, DATASHEETS["H200"])
    assert "this submission" not in [t["name"] for t in fig["data"]]
    assert any("not timed" in a["text"] for a in fig["layout"]["annotations"])
