"""A beat carries the slice's kind and the GPU's live state; without NVML it says so and still beats."""

from __future__ import annotations

import json

import redis

from gpu_worker import protocol
from gpu_worker.measurement import device_info
from gpu_worker.worker import heartbeat


def _heart(client, prefix):
    return heartbeat.Heart(
        client, prefix=prefix, name="gpu.h200.mps30@n1", queue="gpu.h200.mps30", pool="h200.mps30",
        backend="cuda", interval=10, slice_kind="mps",
    )  # fmt: skip


def test_each_beat_carries_the_slice_kind_and_what_the_probe_read(broker_prefix, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", str(tmp_path))
    monkeypatch.setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "30")
    (tmp_path / "control").touch()  # the control daemon's pipe is there
    with redis.Redis.from_url("redis://127.0.0.1:6379/1") as client:
        heart = _heart(client, broker_prefix)
        heart.probe = lambda: device_info.live_state(device_info.Nvml(uuid="GPU-not-on-this-machine"))
        heart.beat()
        doc = json.loads(client.get(protocol.heartbeat_key(broker_prefix, "gpu.h200.mps30@n1")))
    assert doc["slice_kind"] == "mps"
    mps = doc["gpu_state"]["mps"]
    assert mps == {
        "client": True, "pipe_directory": str(tmp_path), "daemon_reachable": True,
        "active_thread_percentage": "30", "pinned_device_mem_limit": None,
    }  # fmt: skip
    assert doc["gpu_state"]["nvml"] is False  # no GPU here: NVML found none, and the beat still went out


def test_a_probe_that_raises_costs_the_gpu_state_not_the_beat(broker_prefix):
    def broken():
        raise RuntimeError("NVML_ERROR_GPU_IS_LOST")

    with redis.Redis.from_url("redis://127.0.0.1:6379/1") as client:
        heart = _heart(client, broker_prefix)
        heart.probe = broken
        heart.beat()
        doc = json.loads(client.get(protocol.heartbeat_key(broker_prefix, "gpu.h200.mps30@n1")))
    assert doc["gpu_state"] == {"nvml": False, "problem": "NVML failed: RuntimeError: NVML_ERROR_GPU_IS_LOST"}


def test_a_worker_outside_mps_is_no_client():
    assert device_info.mps_status({}) == {"client": False}
    assert device_info.mps_status({"CUDA_MPS_PIPE_DIRECTORY": "/nonexistent"})["daemon_reachable"] is False
