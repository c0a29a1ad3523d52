"""Calibration bookkeeping without a GPU: the health rule, the cache file, the metrics ceilings."""

from __future__ import annotations

import json

from gpu_worker.measurement import calibrate

H200 = calibrate.ANCHORS["NVIDIA H200"]


def _doc(**ceilings):
    return {
        "key": {"uuid": "GPU-1234", "driver": "580.1", "name": "NVIDIA H200"},
        "measured_at": "2026-12-02T17:00:00+00:00",
        "ceilings": {**H200, **ceilings},
    }


def test_a_worker_at_its_anchors_is_healthy():
    assert calibrate.healthy(dict(H200), H200) == (True, [])


def test_a_worker_more_than_ten_percent_under_an_anchor_takes_itself_out_of_service():
    ok, problems = calibrate.healthy({**H200, "copy_bytes_per_s": 0.85 * H200["copy_bytes_per_s"]}, H200)
    assert not ok and "copy_bytes_per_s" in problems[0]


def test_nine_percent_under_is_still_healthy_and_above_is_always_fine():
    ceilings = {**H200, "fp32_flops": 0.91 * H200["fp32_flops"], "tensor_flops": 2 * H200["tensor_flops"]}
    assert calibrate.healthy(ceilings, H200)[0]


def test_a_gpu_without_anchors_is_healthy_by_default():
    assert calibrate.healthy({"copy_bytes_per_s": 1.0}, None) == (True, [])


def test_a_missing_ceiling_is_a_problem():
    ceilings = dict(H200)
    del ceilings["tensor_flops"]
    assert not calibrate.healthy(ceilings, H200)[0]


def test_the_cache_is_found_by_uuid_and_driver(tmp_path, monkeypatch):
    path = calibrate._cache_file("GPU-1234", "580.1", str(tmp_path))
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(_doc()))

    class FakeNvml:
        def __init__(self, uuid=None):
            pass

        def driver_version(self):
            return "580.1"

    monkeypatch.setattr(calibrate, "Nvml", FakeNvml)
    assert calibrate.find_cached("GPU-1234", str(tmp_path))["key"]["uuid"] == "GPU-1234"
    assert calibrate.find_cached("GPU-9999", str(tmp_path)) is None


def test_metrics_ceilings_carry_the_copy_and_fp32_roofs():
    c = calibrate.metrics_ceilings(_doc())
    assert c.copy_bandwidth == H200["copy_bytes_per_s"] and c.fp32 == H200["fp32_flops"]
    assert "GPU-1234" in c.source
    assert calibrate.metrics_ceilings(None) is None


def test_the_table_shows_each_ceiling_against_its_anchor():
    text = calibrate.format_table(_doc())
    assert "copy_bytes_per_s" in text and "1.000" in text and text.endswith("healthy")


def _document(fp32: float, tensor: float, clock: int) -> dict:
    details = {key: {"sm_clock_mhz": clock} for key in ("fp32_flops", "tensor_flops")}
    return {
        "key": {"name": "NVIDIA H200"},
        "device": {"arch": "sm_90", "sm_count": 132},
        "ceilings": {**H200, "fp32_flops": fp32, "tensor_flops": tensor},
        "details": details,
    }


def test_a_card_the_power_limit_slowed_is_slower_not_sick():
    # run 16: BF16 fell to 0.88 of its anchor as the clock fell from 1980 to 1560 MHz
    ok, problems = calibrate.judge(_document(fp32=65.3e12 * 1560 / 1980, tensor=0.88 * 793e12, clock=1560))
    assert ok, problems


def test_a_compute_rate_far_under_the_peak_at_its_own_clock_is_unhealthy():
    ok, problems = calibrate.judge(_document(fp32=0.5 * 66.9e12, tensor=793e12, clock=1980))
    assert not ok
    assert "fp32_flops" in problems[0] and "1980 MHz" in problems[0]


def test_the_fp32_anchor_is_what_a_healthy_h200_measures():
    assert calibrate.ANCHORS["NVIDIA H200"]["fp32_flops"] == 65.3e12
    assert 65.3e12 / calibrate.peak_at_clock(_document(65.3e12, 793e12, 1980), "fp32_flops") > 0.97
