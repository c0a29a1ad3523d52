"""The fleet page shows staff every live worker's heartbeat, read from real Redis; nobody else sees it.

Heartbeats are written with `gpu_worker.worker.heartbeat`'s own `Heart`, under a
broker prefix of each test alone that the site is set to for that test.
"""

from __future__ import annotations

import re
import time

import pytest
import redis
from django.test import Client

from gpu_worker import protocol
from gpu_worker.measurement import calibrate
from gpu_worker.worker import heartbeat
from tests.labs.factories import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

H200 = calibrate.ANCHORS["NVIDIA H200"]
FP32_TFLOPS = H200["fp32_flops"] / 1e12


@pytest.fixture
def site_prefix(broker_prefix, settings):
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": broker_prefix}
    return broker_prefix


@pytest.fixture
def client_redis(settings):
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:
        yield client


def _heart(client: redis.Redis, prefix: str, name: str, *, backend: str = "cuda", pool: str = "h200.full"):
    queue = "sim" if pool == "sim" else f"gpu.{pool}"
    return heartbeat.Heart(client, prefix=prefix, name=name, queue=queue, pool=pool, backend=backend, interval=10)


def _calibration(**ceilings: float) -> dict:
    return {
        "key": {"uuid": "GPU-1234", "driver": "580.1", "name": "NVIDIA H200"},
        "measured_at": "2026-12-02T17:00:00+00:00",
        "ceilings": {**H200, **ceilings},
    }


def _worker_html(page: str, name: str) -> str:
    match = re.search(rf'<li [^>]*id="worker-{re.escape(name)}".*?</li>\s*(?=<li|</ol>)', page, re.S)
    assert match, f"no worker {name} on the page"
    return match.group(0)


def test_staff_see_each_live_worker_with_its_ceilings_as_a_share_of_the_anchors(ada, site_prefix, client_redis):
    _heart(client_redis, site_prefix, "gpu.h200.full@a").set(heartbeat.decide(_calibration()))
    slow = _calibration(fp32_flops=0.88 * H200["fp32_flops"])
    _heart(client_redis, site_prefix, "gpu.h200.full@b").set(heartbeat.decide(slow))
    _heart(client_redis, site_prefix, "sim@c", backend="sim", pool="sim").set(heartbeat.simulator())

    response = client_for(ada).get("/fleet/")
    assert response.status_code == 200
    page = response.content.decode()
    healthy = _worker_html(page, "gpuh200fulla")
    assert "serving" in healthy and "NVIDIA H200" in healthy and "gpu.h200.full" in healthy
    assert re.search(rf"FP32</td>\s*<td>{FP32_TFLOPS:.1f} TFLOP/s</td>\s*<td>100%</td>", healthy)
    assert re.search(r"copy</td>\s*<td>4.27 TB/s</td>\s*<td>100%</td>", healthy)
    unhealthy = _worker_html(page, "gpuh200fullb")
    assert "· out of service" in unhealthy
    assert re.search(rf"FP32</td>\s*<td>{0.88 * FP32_TFLOPS:.1f} TFLOP/s</td>\s*<td>88%</td>", unhealthy)
    assert "FP32 FMA rate:" in unhealthy and "12.0% under the anchor" in unhealthy
    assert "The simulator measures no ceilings." in _worker_html(page, "simc")


def test_an_instructor_is_staff_and_sees_the_fleet_too(ian, site_prefix):
    assert client_for(ian).get("/fleet/").status_code == 200


def test_a_student_gets_a_403(alice, site_prefix):
    assert client_for(alice).get("/fleet/").status_code == 403


def test_a_visitor_is_sent_to_log_in(site_prefix):
    response = Client().get("/fleet/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=/fleet/")


def test_an_expired_or_garbled_key_is_skipped(ada, site_prefix, client_redis):
    _heart(client_redis, site_prefix, "gpu.h200.full@live").set(heartbeat.decide(_calibration()))
    client_redis.set(protocol.heartbeat_key(site_prefix, "gpu.h200.full@gone"), b'{"name": "gone"}', px=50)
    client_redis.set(protocol.heartbeat_key(site_prefix, "garbage@x"), b"not json {")
    client_redis.set(protocol.heartbeat_key(site_prefix, "a-list@x"), b"[1, 2]")
    time.sleep(0.1)  # the first has expired by now

    page = client_for(ada).get("/fleet/").content.decode()
    assert page.count('class="module worker') == 1 and "gpu.h200.full@live" in page
    assert "gone" not in page and "garbage" not in page and "a-list" not in page


def test_workers_under_another_broker_prefix_are_not_this_sites(ada, site_prefix, client_redis):
    other = f"{site_prefix}other-"  # SCAN's glob must not match a longer prefix that starts with ours
    _heart(client_redis, other, "sim@elsewhere", backend="sim", pool="sim").set(heartbeat.simulator())
    page = client_for(ada).get("/fleet/").content.decode()
    assert "elsewhere" not in page and 'id="no-workers"' in page


def test_a_broker_that_does_not_answer_is_said_so(ada, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    response = client_for(ada).get("/fleet/")
    assert response.status_code == 200 and 'id="fleet-error"' in response.content.decode()


def test_a_learner_submitting_to_a_queue_no_worker_serves_is_told_why_the_run_waits(alice, labs_loaded, site_prefix):
    from labs.runs.services import submit_run

    submission = submit_run(alice, "vector-add", "numba", "def vector_add(a, b, c): pass")
    queued = submission.events.get(seq=1).payload
    assert queued["type"] == "queued" and queued["queue"] == "sim"
    assert queued["message"].startswith("No worker is serving sim right now.")


def test_an_out_of_service_gpu_is_named_with_its_reason_and_a_serving_one_says_nothing(site_prefix, client_redis):
    from labs.fleet.heartbeats import queue_notice

    sick = _heart(client_redis, site_prefix, "gpu.h200.full@a")
    sick.set(heartbeat.decide(_calibration(fp32_flops=0.88 * H200["fp32_flops"])))
    notice = queue_notice("gpu.h200.full")
    assert "out of service" in notice and "FP32 FMA rate" in notice and "12.0% under the anchor" in notice
    sick.set(heartbeat.calibrating(sick.status))
    assert queue_notice("gpu.h200.full").startswith("The worker for gpu.h200.full is measuring its GPU")
    _heart(client_redis, site_prefix, "gpu.h200.full@b").set(heartbeat.decide(_calibration()))
    assert queue_notice("gpu.h200.full") == ""
    assert queue_notice("gpu.h100.full").startswith("No worker is serving gpu.h100.full")


def test_a_fleet_that_cannot_be_read_adds_no_notice(settings):
    from labs.fleet.heartbeats import queue_notice

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    assert queue_notice("sim") == ""
