"""A copy or a transpose (0 FLOP) has no place on a log intensity axis: it is marked on the memory roof's axis."""

from gpu_worker.figures import analysis
from gpu_worker.protocol import WorkSpec
from gpu_worker.science.metrics import Ceilings

COPY = WorkSpec(bytes="8 * n * n", flops="0")
H200 = Ceilings(source="measured on an H200", copy_bandwidth=4.27e12, fp32=60.6e12, bf16_tensor=793e12)


def test_on_the_simulator_the_kernel_is_marked_by_what_it_moves_against_the_datasheet_roof():
    entry = analysis.roofline(COPY, [{"n": 64}], {}, None, "sim", "simulator (CPU)")
    fig = entry["figure"]
    assert entry["title"].startswith("Roofline, memory axis (0 FLOP)")
    assert [t["name"] for t in fig["data"]] == ["memory roof 4.8 TB/s (datasheet)"]
    assert fig["layout"]["annotations"][0]["text"] == "this kernel: 0 FLOP, 32.8 kB moved per launch (not timed)"
    assert fig["layout"]["yaxis"]["tickformat"] == "~s" and fig["layout"]["yaxis"]["ticksuffix"] == "B/s"


def test_timed_sizes_are_stars_under_the_measured_and_datasheet_memory_roofs():
    metrics = {0: {"sizes": {"n": 1000}, "bandwidth": 1.5e12}, 1: {"sizes": {"n": 8192}, "bandwidth": 3.9e12}}
    fig = analysis.roofline(COPY, [{"n": 1000}, {"n": 8192}], metrics, H200, "NVIDIA H200", "NVIDIA H200")["figure"]
    names = [t["name"] for t in fig["data"]]
    assert names == ["memory roof 4.27 TB/s (measured)", "memory roof 4.8 TB/s (datasheet)", "this submission"]
    stars = fig["data"][2]
    assert stars["y"] == [1.5e12, 3.9e12] and stars["text"] == ["n=1,000", "n=8,192"]
