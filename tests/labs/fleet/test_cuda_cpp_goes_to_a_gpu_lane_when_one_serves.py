"""CUDA C++ runs only on a GPU: it goes to a serving GPU lane, and without one the page says so before submit."""

import pytest
import redis

from gpu_worker.measurement import calibrate
from gpu_worker.worker import heartbeat
from labs.fleet import languages
from labs.models import Exercise
from labs.runs import services

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


@pytest.fixture
def site_prefix(broker_prefix, settings):
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": broker_prefix}
    return broker_prefix


def _serving_gpu(prefix: str) -> None:
    calibration = {
        "key": {"uuid": "GPU-1234", "driver": "580.1", "name": "NVIDIA H200"},
        "measured_at": "2026-12-02T17:00:00+00:00",
        "ceilings": dict(calibrate.ANCHORS["NVIDIA H200"]),
    }
    with redis.Redis.from_url(services.settings.CELERY_BROKER_URL) as client:
        heart = heartbeat.Heart(
            client,
            prefix=prefix,
            name="gpu.h200.full@a",
            queue="gpu.h200.full",
            pool="h200.full",
            backend="cuda",
            interval=10,
        )
        heart.set(heartbeat.decide(calibration))


def test_without_a_gpu_worker_cuda_cpp_is_told_before_submit_it_runs_on_the_cpu_untimed(site_prefix, labs_loaded):
    notes = languages.language_notes(Exercise.objects.get(slug="vector-add"))
    assert "PTX executor" in notes["cuda"] and "not timed" in notes["cuda"] and "GPU lane" in notes["cuda"]
    assert "GPU lane" not in notes["numba"]


def test_with_a_serving_gpu_worker_alice_s_cuda_cpp_run_goes_there(site_prefix, alice, labs_loaded):
    _serving_gpu(site_prefix)
    exercise = Exercise.objects.get(slug="vector-add")
    assert languages.language_notes(exercise)["cuda"] == ""
    run = services.submit_run(alice, "vector-add", "cuda", 'extern "C" __global__ void vector_add() {}')
    assert run.queue == "gpu.h200.full"
