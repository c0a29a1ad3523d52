"""The GPU's timing-lock duty cycle: jobs add their hold to the broker's ledger, every worker of a GPU together,
and the heartbeat carries the last minute's lock-held seconds per wall second (real Redis)."""

from __future__ import annotations

import json
import time

import pytest
import redis
from django.conf import settings

from gpu_worker import protocol
from gpu_worker.measurement import gpu_busy
from gpu_worker.worker import heartbeat

pytestmark = pytest.mark.integration
NOW = 1_800_000_005.0  # inside a bucket: the window is the six whole buckets before it
UUID = "GPU-1234abcd"


@pytest.fixture
def client():
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as c:
        yield c


def test_two_workers_holds_add_up_over_the_last_minute(client, broker_prefix):
    gpu_busy.record(client, broker_prefix, UUID, 12.0, now=NOW - 30)  # worker one
    gpu_busy.record(client, broker_prefix, UUID, 6.0, now=NOW - 15)  # worker two, same GPU
    gpu_busy.record(client, broker_prefix, "GPU-other", 50.0, now=NOW - 15)  # another GPU counts apart
    gpu_busy.record(client, broker_prefix, UUID, 40.0, now=NOW - 300)  # long gone from the window
    busy = gpu_busy.duty_cycle(client, broker_prefix, UUID, now=NOW)
    assert busy == {"lock_held_seconds": 18.0, "window_seconds": 60, "lock_held_per_wall": 0.3}


def test_the_current_bucket_waits_until_it_is_whole(client, broker_prefix):
    gpu_busy.record(client, broker_prefix, UUID, 3.0, now=NOW)
    assert gpu_busy.duty_cycle(client, broker_prefix, UUID, now=NOW)["lock_held_seconds"] == 0.0
    assert gpu_busy.duty_cycle(client, broker_prefix, UUID, now=NOW + 10)["lock_held_seconds"] == 3.0


def test_nothing_held_is_recorded_as_nothing_and_expires(client, broker_prefix):
    gpu_busy.record(client, broker_prefix, UUID, 0.0, now=NOW)
    gpu_busy.record(client, broker_prefix, UUID, 2.0, now=NOW)
    keys = list(client.scan_iter(match=f"{broker_prefix}warplab:gpu-busy:*"))
    assert len(keys) == 1 and 0 < client.ttl(keys[0]) <= gpu_busy.KEEP_SECONDS


def test_a_gpu_worker_s_heartbeat_carries_its_gpu_s_duty_cycle(client, broker_prefix):
    heart = heartbeat.Heart(client, prefix=broker_prefix, name="gpu.h100@n1", queue="gpu.h100", pool="h100",
                            backend="cuda", interval=10)  # fmt: skip
    calibration = {"key": {"name": "NVIDIA H100 80GB HBM3", "uuid": UUID}, "ceilings": {"copy_bytes_per_s": 3e12}}
    gpu_busy.record(client, broker_prefix, UUID, 9.0, now=time.time() - 20)
    heart.set(heartbeat.decide(calibration))
    document = json.loads(client.get(protocol.heartbeat_key(broker_prefix, "gpu.h100@n1")))
    assert document["gpu_busy"]["window_seconds"] == 60
    assert document["gpu_busy"]["lock_held_seconds"] == pytest.approx(9.0)


def test_a_simulator_s_heartbeat_has_no_gpu_to_be_busy(client, broker_prefix):
    heart = heartbeat.Heart(client, prefix=broker_prefix, name="sim@n1", queue="sim", pool="sim", backend="sim",
                            interval=10)  # fmt: skip
    heart.set(heartbeat.simulator())
    document = json.loads(client.get(protocol.heartbeat_key(broker_prefix, "sim@n1")))
    assert document["gpu_busy"] is None
