"""Runs go to the least-loaded pool of their lane, learners are told their place and wait, GPU time is capped.

Real Redis throughout: workers' heartbeats are written by `gpu_worker.worker.heartbeat.Heart`, and the
broker's queues are filled through kombu's own Redis transport under this test's broker prefix.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis
from django.utils import timezone
from kombu import Connection

from gpu_worker.measurement import calibrate
from gpu_worker.worker import heartbeat
from labs.fleet import budgets, routing
from labs.models import Exercise
from labs.models.run import Status
from labs.runs import services
from tests.labs.factories import make_run, make_student
from tests.labs.fleet.factories import h200_node

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


@pytest.fixture
def site(broker_prefix, settings, labs_loaded):
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": broker_prefix}
    settings.WARPLAB_DEFAULT_QUEUE = "sim"
    h200_node()
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:
        yield client, broker_prefix, settings


def serve(site, name: str) -> None:
    client, prefix, _ = site
    queue = name.split("@")[0]
    calibration = {"key": {"uuid": "GPU-1", "name": "NVIDIA H200"}, "ceilings": calibrate.ANCHORS["NVIDIA H200"]}
    heart = heartbeat.Heart(client, prefix=prefix, name=name, queue=queue, pool=queue[4:], backend="cuda", interval=10)
    heart.set(heartbeat.decide(calibration))


def fill(site, queue: str, jobs: int) -> None:
    _, prefix, settings = site
    with Connection(settings.CELERY_BROKER_URL, transport_options={"global_keyprefix": prefix}) as conn:
        waiting = conn.SimpleQueue(queue)
        for i in range(jobs):
            waiting.put({"job": i})
        waiting.close()


def test_a_graded_run_goes_only_to_an_exclusive_pool_and_practice_to_the_least_loaded(site):
    exercise = Exercise.objects.get(slug="vector-add")
    serve(site, "gpu.h200.mig3g@node1-gpu0-s0")
    serve(site, "gpu.h200.mps30@node1-gpu1-s0")
    fill(site, "gpu.h200.mig3g", 4)
    assert routing.route(exercise, "graded").queue == "gpu.h200.mig3g"
    assert routing.route(exercise, "practice").queue == "gpu.h200.mps30"


def test_the_pool_with_more_live_workers_per_waiting_run_is_chosen(site):
    exercise = Exercise.objects.get(slug="vector-add")
    serve(site, "gpu.h200.mig3g@node1-gpu0-s0")
    serve(site, "gpu.h200.mig2g@node1-gpu0-s1")
    serve(site, "gpu.h200.mig2g@node1-gpu0-s2")
    fill(site, "gpu.h200.mig3g", 2)
    fill(site, "gpu.h200.mig2g", 3)  # 1.5 per worker against 2
    assert routing.route(exercise, "graded").queue == "gpu.h200.mig2g"


def test_with_no_live_worker_in_the_lane_the_run_goes_to_the_default_queue_and_says_why_it_waits(site, alice):
    assert routing.route(Exercise.objects.get(slug="vector-add"), "graded").queue == "sim"
    queued = services.submit_run(alice, "vector-add", "numba", "def f(): pass").events.get(seq=1).payload
    assert queued["message"].startswith("No worker is serving sim right now.")
    assert queued["ahead"] == 0 and queued["expected_wait_seconds"] is None


def test_an_exercise_that_requires_a_pool_goes_there(site):
    exercise = Exercise.objects.get(slug="vector-add")
    exercise.pool = "gpu.h200.mps70"
    assert routing.route(exercise, "graded").queue == "gpu.h200.mps70"


def test_a_learner_sees_how_many_are_ahead_and_about_how_long(site, alice, bob):
    serve(site, "gpu.h200.mig3g@node1-gpu0-s0")
    exercise = Exercise.objects.get(slug="vector-add")
    exercise.pool = "gpu.h200.mig3g"
    exercise.save()
    now = timezone.now()
    for i in range(4):  # four earlier runs took 5 s each on this queue
        run = make_run(bob, queue="gpu.h200.mig3g")
        run.started_at, run.finished_at = now - timedelta(seconds=60 + 10 * i), now - timedelta(seconds=55 + 10 * i)
        run.save()
    for name in ("carol", "dan", "erin"):
        waiting = make_run(make_student(name), queue="gpu.h200.mig3g")
        waiting.status, waiting.result = Status.QUEUED, None
        waiting.save()
    queued = services.submit_run(alice, "vector-add", "numba", "def f(): pass").events.get(seq=1).payload
    assert queued["ahead"] == 3 and queued["expected_wait_seconds"] == 15.0
    assert queued["message"] == (
        "3 ahead of you, about 15 s. GPU time left: 3600 of your 3600 GPU-seconds for the last 24 hours, "
        "about 720 more runs at about 5 s a run. Runs on the CPU tier are free."
    )
    assert "median of 4 runs" in queued["job_time_words"]


def test_a_run_on_a_shared_pool_is_labelled_indicative(site, alice):
    serve(site, "gpu.h200.mps30@node1-gpu1-s0")
    exercise = Exercise.objects.get(slug="vector-add")
    exercise.pool = "gpu.h200.mps30"
    exercise.save()
    submission = services.submit_run(alice, "vector-add", "numba", "def f(): pass")
    assert submission.events.get(seq=1).payload["indicative"] == "shared GPU: indicative"
    result = {"submission_id": submission.pk, "verdict": "accepted", "backend": "cuda", "device": "NVIDIA H200"}
    services.record_result(submission.pk, result)
    submission.refresh_from_db()
    assert submission.result["indicative"] == "shared GPU: indicative"
    assert submission.events.order_by("-seq").first().payload["indicative"] == "shared GPU: indicative"


def test_a_learner_over_their_gpu_seconds_for_the_day_is_told_so_and_the_simulator_stays_open(site, alice):
    _, _, settings = site
    settings.WARPLAB_GPU_SECONDS_PER_DAY = 100
    serve(site, "gpu.h200.mig3g@node1-gpu0-s0")
    run = make_run(alice, queue="gpu.h200.mig3g")
    run.started_at, run.finished_at = timezone.now() - timedelta(seconds=130), timezone.now()
    run.save()
    exercise = Exercise.objects.get(slug="vector-add")
    exercise.pool = "gpu.h200.mig3g"
    exercise.save()
    with pytest.raises(services.SubmissionRejected) as refused:
        services.submit_run(alice, "vector-add", "numba", "def f(): pass")
    assert refused.value.status == 429
    assert refused.value.message.startswith(
        "No GPU time left: 130 of your 100 GPU-seconds for the last 24 hours are spent."
    )
    exercise.pool = "sim"
    exercise.save()
    assert services.submit_run(alice, "vector-add", "numba", "def f(): pass").queue == "sim"


def test_a_course_over_its_gpu_seconds_for_the_day_is_named_to_each_of_its_students(site, alice, bob, ian):
    from tests.labs.courses.factories import make_course

    _, _, settings = site
    settings.WARPLAB_COURSE_GPU_SECONDS_PER_DAY = 100
    make_course(ian, "GPU Programming", students=(alice, bob))
    run = make_run(bob, queue="gpu.h200.mig3g")  # bob's run spends the course's time, alice is refused too
    run.started_at, run.finished_at = timezone.now() - timedelta(seconds=120), timezone.now()
    run.save()
    with pytest.raises(budgets.OverGpuBudget) as refused:
        budgets.check(alice, "gpu.h200.mig3g")
    assert "120 of GPU Programming's 100 GPU-seconds (all its students together)" in refused.value.message
    budgets.check(alice, "sim")  # the simulator is never capped
