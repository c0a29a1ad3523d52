"""The worker's state from its calibration, and the heartbeat document it publishes; no GPU, no Redis."""

from __future__ import annotations

import json
import os
import socket

from gpu_worker import protocol
from gpu_worker.measurement import calibrate
from gpu_worker.worker import heartbeat

H200 = calibrate.ANCHORS["NVIDIA H200"]


def _calibration(**ceilings: float) -> dict:
    return {
        "key": {"uuid": "GPU-1234", "driver": "580.1", "name": "NVIDIA H200"},
        "measured_at": "2026-12-02T17:00:00+00:00",
        "ceilings": {**H200, **ceilings},
    }


def test_a_healthy_calibration_serves_with_its_ceilings():
    status = heartbeat.decide(_calibration())
    assert status.state == heartbeat.SERVING and status.healthy and status.problems == []
    assert status.ceilings == H200 and status.anchors == H200 and status.device == "NVIDIA H200"
    assert status.measured_at == "2026-12-02T17:00:00+00:00" and status.gpu_uuid == "GPU-1234"


def test_twelve_percent_under_the_fp32_anchor_takes_the_worker_out_of_service_and_says_which():
    status = heartbeat.decide(_calibration(fp32_flops=0.88 * H200["fp32_flops"]))
    assert status.state == heartbeat.OUT_OF_SERVICE and status.healthy is False
    assert len(status.problems) == 1
    assert status.problems[0].startswith("FP32 FMA rate:") and "12.0% under the anchor" in status.problems[0]
    assert status.ceilings is not None  # what was measured stays visible


def test_nine_percent_under_still_serves():
    assert heartbeat.decide(_calibration(tensor_flops=0.91 * H200["tensor_flops"])).state == heartbeat.SERVING


def test_a_calibration_that_crashed_takes_the_worker_out_of_service_with_the_error():
    status = heartbeat.decide(None, "`calibrate` exited 1: CUDARuntimeError: no CUDA-capable device is detected")
    assert status.state == heartbeat.OUT_OF_SERVICE and status.healthy is False and status.ceilings is None
    assert status.problems == [
        "calibration failed: `calibrate` exited 1: CUDARuntimeError: no CUDA-capable device is detected"
    ]


def test_a_calibration_without_a_document_is_a_failure_too():
    status = heartbeat.decide(None)
    assert status.state == heartbeat.OUT_OF_SERVICE and status.problems == ["calibration failed: it gave no ceilings"]


def test_a_gpu_without_anchors_serves_unchecked():
    data = _calibration()
    data["key"]["name"] = "NVIDIA L4"
    status = heartbeat.decide(data)
    assert status.state == heartbeat.SERVING and status.anchors is None and status.ceilings == H200


def test_calibrating_again_keeps_what_the_last_calibration_said():
    failed = heartbeat.decide(None, "boom")
    again = heartbeat.calibrating(failed)
    assert again.state == heartbeat.CALIBRATING and again.problems == failed.problems


def test_the_heartbeat_document_names_the_worker_and_its_state():
    doc = protocol.heartbeat_document(
        heartbeat.decide(_calibration()),
        name="gpu.h200.full@box",
        queue="gpu.h200.full",
        pool="h200.full",
        backend="cuda",
    )
    expected = {"name", "queue", "pool", "backend", "device", "ceilings", "measured_at", "healthy", "problems"}
    expected |= {"state", "updated_at", "pid", "host"}
    assert expected <= set(doc)
    assert doc["state"] == "serving" and doc["queue"] == "gpu.h200.full" and doc["pid"] == os.getpid()
    assert doc["host"] == socket.gethostname() and doc["ceilings"]["fp32_flops"] == H200["fp32_flops"]
    assert json.loads(json.dumps(doc)) == doc


def test_a_simulator_serves_without_ceilings():
    doc = protocol.heartbeat_document(heartbeat.simulator(), name="sim@box", queue="sim", pool="sim", backend="sim")
    assert doc["state"] == "serving" and doc["ceilings"] is None and doc["device"] == "simulator (CPU)"


def test_the_key_carries_the_broker_prefix():
    assert protocol.heartbeat_key("warplab-test-1-", "sim@box") == "warplab-test-1-warplab:worker:sim@box"
