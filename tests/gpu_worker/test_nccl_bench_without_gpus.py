"""The NCCL bench on a machine with fewer than two GPUs says so, measures nothing and writes the model alone."""

from __future__ import annotations

import json

import pytest

from bench import nccl_bench


def test_with_fewer_than_two_gpus_it_measures_nothing_and_says_so(tmp_path):
    visible, _ = nccl_bench.gpu_count()
    if visible >= 2:
        pytest.skip("this machine has several GPUs: the bench would measure")
    assert nccl_bench.main(["--out", str(tmp_path), "--largest", "64"]) == nccl_bench.FEWER_THAN_TWO
    table = (tmp_path / "nccl-bench.md").read_text()
    assert "Nothing was measured" in table and "not measured" in table
    doc = json.loads((tmp_path / "nccl-bench.json").read_text())
    assert {r["n"] for r in doc["rows"]} == {8} and all("time_us" not in r for r in doc["rows"])


def test_sizes_are_split_per_rank_as_nccl_tests_counts_them():
    assert nccl_bench.elements("all_reduce", 1024, 4) == (256, 256)
    assert nccl_bench.elements("all_gather", 1024, 4) == (64, 256)
    assert nccl_bench.elements("reduce_scatter", 1024, 4) == (256, 64)


def test_a_measured_row_carries_both_bandwidths_and_the_model_beside_them():
    row = nccl_bench._row("all_reduce", 1 << 30, 8, 0.005, 0)
    assert row["algbw_gbs"] == pytest.approx((1 << 30) / 0.005 / 1e9)
    assert row["busbw_gbs"] == pytest.approx(row["algbw_gbs"] * 14 / 8)
    assert row["model_ring_busbw_gbs"] > 400


def test_the_replot_draws_measurement_and_model_on_one_plot(tmp_path):
    doc = {"date": "2026-12-03T00:00:00Z", "device": "2 x NVIDIA H200", "library": "test",
           "rows": [nccl_bench._row("all_reduce", s, 2, s / 300e9 + 1e-5, 0) for s in (1 << 20, 1 << 24)]}  # fmt: skip
    (tmp_path / "in.json").write_text(json.dumps(doc))
    assert nccl_bench.main(["--out", str(tmp_path), "--replot", str(tmp_path / "in.json")]) == 0
    names = [t["name"] for t in json.loads((tmp_path / "nccl-bench-figure.json").read_text())["data"]]
    assert names == ["all-reduce, measured (2 x NVIDIA H200)", "all-reduce, model (ring, H200 NVLink)"]
