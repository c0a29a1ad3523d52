"""Ada's dashboard sets the plan against what is live: heartbeats from real Redis, runs from the database."""

from __future__ import annotations

import time

import pytest
import redis
from django.conf import settings

from gpu_worker.measurement import calibrate, gpu_busy
from gpu_worker.worker import heartbeat
from labs.models.run import Status
from tests.labs.factories import client_for, make_run
from tests.labs.fleet.factories import h200_node

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


@pytest.fixture
def beats(broker_prefix, settings):
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": broker_prefix}
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:

        def beat(name: str, gpu_state: dict | None = None, uuid: str | None = None) -> None:
            queue = name.split("@")[0]
            heart = heartbeat.Heart(
                client, prefix=broker_prefix, name=name, queue=queue, pool=queue[4:], backend="cuda", interval=10
            )
            heart.probe = (lambda: gpu_state) if gpu_state else None
            calibration = {"key": {"name": "NVIDIA H200", "uuid": uuid}, "ceilings": calibrate.ANCHORS["NVIDIA H200"]}
            heart.set(heartbeat.decide(calibration))

        yield beat


def test_ada_sees_each_planned_worker_live_or_silent_with_its_gpu_state(ada, beats, labs_loaded):
    h200_node()
    state = {"nvml": True, "utilisation_percent": 87, "temperature_c": 61, "sm_clock_mhz": 1755, "mig_mode": True,
             "throttle_reasons": ["sw_power_cap"], "mps": {"client": False}}  # fmt: skip
    beats("gpu.h200.mig3g@node1-gpu0-s0", state)
    page = client_for(ada).get("/fleet/dashboard/").content.decode()
    live = page.split('id="planned-gpuh200mig3gnode1-gpu0-s0"')[1].split("</tr>")[0]
    assert "serving" in live and "util 87 %" in live and "SM clock 1755 MHz" in live and "MIG on" in live
    assert "clock held down by sw_power_cap" in live
    silent = page.split('id="planned-gpuh200mig2gnode1-gpu0-s1"')[1].split("</tr>")[0]
    assert "silent: no heartbeat" in silent


def test_ada_sees_how_much_of_the_last_minute_timed_runs_held_each_gpu(ada, beats, broker_prefix, labs_loaded):
    h200_node()
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:
        gpu_busy.record(client, broker_prefix, "MIG-abc", 27.0, now=time.time() - 20)
    beats("gpu.h200.mig3g@node1-gpu0-s0", {"nvml": True, "utilisation_percent": 40}, uuid="MIG-abc")
    page = client_for(ada).get("/fleet/dashboard/").content.decode()
    live = page.split('id="planned-gpuh200mig3gnode1-gpu0-s0"')[1].split("</tr>")[0]
    assert "timed runs held it 45% of the last minute" in live


def test_a_worker_whose_slice_left_the_plan_and_runs_no_worker_serves_are_named(ada, bob, beats, labs_loaded):
    h200_node()
    beats("gpu.h200.mig1g@node1-gpu0-s5")  # a slice laid out earlier, since removed
    waiting = make_run(bob, queue="gpu.h200.mps70")
    waiting.status, waiting.result = Status.QUEUED, None
    waiting.save()
    page = client_for(ada).get("/fleet/dashboard/").content.decode()
    assert "Worker gpu.h200.mig1g@node1-gpu0-s5 beats on gpu.h200.mig1g but the plan has no such worker" in page
    assert "1 run(s) wait on gpu.h200.mps70 and no live worker serves it; learners are told so." in page
    row = page.split('id="queue-gpuh200mps70"')[1].split("</tr>")[0]
    assert "<td>1</td>" in row  # waiting
