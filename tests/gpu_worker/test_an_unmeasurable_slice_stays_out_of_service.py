"""A cuda worker whose calibration fails serves nothing: its heartbeat says why; it measures again, stops cleanly.

A real `gpu_worker serve` process with WARPLAB_BACKEND=cuda and no GPU it may
see (CUDA_VISIBLE_DEVICES empty; on a CPU machine CuPy is not even there): its
`calibrate` subprocess fails for real, on any machine.
"""

from __future__ import annotations

import json
import time

import pytest
import redis
from celery import Celery
from django.conf import settings

from tests import processes

pytestmark = pytest.mark.integration

POOL = "nogpu.test"
QUEUE = f"gpu.{POOL}"


def _send_a_job(prefix: str) -> None:
    app = Celery("test-sender", broker=settings.CELERY_BROKER_URL)
    app.conf.broker_transport_options = {"global_keyprefix": prefix}
    try:
        app.send_task("gpu_worker.run_job", args=[{"submission_id": 1}], queue=QUEUE)
    finally:
        app.close()


def test_a_worker_that_cannot_calibrate_is_out_of_service_and_consumes_nothing(broker_prefix, tmp_path):
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    _send_a_job(broker_prefix)
    worker = processes.start_worker(
        "worker-cuda-nogpu",
        backend="cuda",
        pool=POOL,
        ready_text="is out of service",
        WARPLAB_BROKER_PREFIX=broker_prefix,
        WARPLAB_HEARTBEAT_SECONDS="1",
        WARPLAB_RECALIBRATE_SECONDS="1",
        WARPLAB_CACHE_DIR=str(tmp_path),  # no calibration cached by an earlier run answers for it
        CUDA_VISIBLE_DEVICES="",
    )
    try:
        [key] = list(client.scan_iter(match=f"{broker_prefix}warplab:worker:*"))
        beat = json.loads(client.get(key))
        assert beat["state"] in ("out_of_service", "calibrating")  # calibrating: measuring again already
        assert beat["backend"] == "cuda" and beat["queue"] == QUEUE and beat["healthy"] is False
        [problem] = beat["problems"]
        assert problem.startswith("calibration failed: `calibrate` exited 1: ")
        assert 0 < client.pttl(key) <= 3000

        deadline = time.monotonic() + 10
        while worker.log_path.read_text().count("is out of service") < 3:  # measured again, twice
            assert time.monotonic() < deadline, worker.log_path.read_text()[-2000:]
            time.sleep(0.2)
        assert client.llen(f"{broker_prefix}{QUEUE}") == 1  # the job is still waiting for a healthy worker
        assert "ready." not in worker.log_path.read_text()  # Celery never started consuming
    finally:
        worker.stop()
    log = worker.log_path.read_text()
    assert worker.process.returncode == 0, log[-2000:]
    assert "Traceback" not in log
    assert list(client.scan_iter(match=f"{broker_prefix}warplab:worker:*")) == []
    assert client.llen(f"{broker_prefix}{QUEUE}") == 1
