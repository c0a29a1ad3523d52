"""A real sim worker publishes its heartbeat while it runs, renews it, and drops it when told to stop.

A Celery worker process on real Redis, under a broker prefix of this test alone.
"""

from __future__ import annotations

import json
import time

import pytest
import redis
from django.conf import settings

from tests import processes

pytestmark = pytest.mark.integration


def _heartbeats(client: redis.Redis, prefix: str) -> list[bytes]:
    return list(client.scan_iter(match=f"{prefix}warplab:worker:*"))


def test_a_sim_worker_beats_while_it_serves_and_leaves_no_key_behind(broker_prefix):
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    worker = processes.start_sim_worker(
        "worker-sim-heartbeat", WARPLAB_BROKER_PREFIX=broker_prefix, WARPLAB_HEARTBEAT_SECONDS="1"
    )
    try:
        [key] = _heartbeats(client, broker_prefix)
        first = json.loads(client.get(key))
        assert first["state"] == "serving" and first["backend"] == "sim" and first["queue"] == "sim"
        assert first["ceilings"] is None and first["pid"] == worker.process.pid
        assert key.decode() == f"{broker_prefix}warplab:worker:{first['name']}"
        assert 0 < client.pttl(key) <= 3000

        deadline = time.monotonic() + 5
        while (now := json.loads(client.get(key)))["updated_at"] == first["updated_at"]:
            assert time.monotonic() < deadline, "the heartbeat was not renewed"
            time.sleep(0.2)
        assert now["updated_at"] > first["updated_at"] and 0 < client.pttl(key) <= 3000
    finally:
        worker.stop()
    assert worker.process.returncode == 0
    assert _heartbeats(client, broker_prefix) == []
