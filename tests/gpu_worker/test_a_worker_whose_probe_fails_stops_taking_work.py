"""A worker whose GPU probe fails stops consuming and puts its job in flight back; healthy again, it serves.

A real Celery worker (prefork, concurrency 1, late acknowledgement) with WarpLab's heartbeat step, on the
real Redis; only the probe's answer is the test's (`tests.gpu_worker.gate_worker`).
"""

from __future__ import annotations

import json
import sys
import time

import pytest
import redis
from celery import Celery
from django.conf import settings

from tests.processes import Service

pytestmark = pytest.mark.integration
QUEUE = "gpu.gate"


def _until(check, timeout: float = 20.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_failed_probe_stops_consuming_requeues_the_job_in_flight_and_recovery_resumes(broker_prefix):
    url = settings.CELERY_BROKER_URL
    client = redis.Redis.from_url(url, decode_responses=True)
    worker = Service(
        "gate-worker",
        [sys.executable, "-m", "tests.gpu_worker.gate_worker", url, broker_prefix, QUEUE],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "."},
    )
    sender = Celery("gate-sender", broker=url)
    sender.conf.broker_transport_options = {"global_keyprefix": broker_prefix}
    log_key, beat_key = f"{broker_prefix}gate:log", f"{broker_prefix}warplab:worker:gate@test"

    def log() -> list[str]:
        return client.lrange(log_key, 0, -1)

    def state() -> str:
        doc = client.get(beat_key)
        return json.loads(doc)["state"] if doc else ""

    try:
        _until(lambda: state() == "serving", what="the worker serving")
        sender.send_task("gate.work", args=["long", 4.0], queue=QUEUE)
        first = _until(lambda: [e for e in log() if e.startswith("start:long")], what="the job starting")
        client.set(f"{broker_prefix}gate:problem", "NVML no longer answers for this GPU: its slice may be gone")
        _until(lambda: state() == "out_of_service", what="the worker leaving service")
        assert "GPU probe failed" in json.loads(client.get(beat_key))["problems"][0]
        sender.send_task("gate.work", args=["later", 0.0], queue=QUEUE)
        time.sleep(5)  # past the long job's 4 s: it was killed, not finished, and nothing new started
        assert log() == first, "an out-of-service worker ran or finished a job"
        assert client.llen(f"{broker_prefix}{QUEUE}") == 2, "both jobs wait on the queue"

        client.delete(f"{broker_prefix}gate:problem")
        _until(lambda: state() == "serving", what="the worker serving again")
        done = _until(lambda: {"done:long", "done:later"} <= set(log()) and log(), timeout=30, what="both jobs")
        starts = [e for e in done if e.startswith("start:long")]
        assert len(starts) == 2 and starts[0] != starts[1], "the long job ran again, in a new pool process"
        assert done.count("done:long") == 1 and done.count("done:later") == 1
    finally:
        worker.stop()
