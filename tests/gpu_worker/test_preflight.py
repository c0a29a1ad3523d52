"""A low calibration reading is measured once more before the worker leaves service; the cache answers when it may.

The `calibrate` child is replaced by a list of documents (it needs a GPU); the heartbeat is written to the real Redis.
"""

from __future__ import annotations

import datetime as dt
import json
import threading

import pytest
from django.conf import settings as django_settings

from gpu_worker import protocol
from gpu_worker.measurement import calibrate
from gpu_worker.settings import WorkerSettings
from gpu_worker.worker import heartbeat, preflight
from gpu_worker.worker.heartbeat import Heart

pytestmark = pytest.mark.integration
H200 = calibrate.ANCHORS["NVIDIA H200"]
LOW = {"tensor_flops": 0.85 * H200["tensor_flops"]}
SETTINGS = WorkerSettings(remeasure_pause_seconds=0)


def _document(age_s: float = 0, **ceilings: float) -> dict:
    """What `calibrate --json` prints: measured now, or (age_s > 0) read from its cache."""
    measured = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=age_s)
    return {
        "key": {"uuid": "GPU-1234", "driver": "580.1", "name": "NVIDIA H200"},
        "measured_at": measured.replace(microsecond=0).isoformat(),
        "ceilings": {**H200, **ceilings},
        "from_cache": age_s > 0,
    }


@pytest.fixture
def readings(monkeypatch):
    """What each `calibrate` child answers, in turn; the calls made, as (refresh, warm)."""
    queue: list[dict] = []
    calls: list[tuple[bool, bool]] = []

    def answer(heart, settings, refresh, warm=True):
        calls.append((refresh, warm))
        return queue.pop(0), None

    monkeypatch.setattr(preflight, "_calibrate_once", answer)
    return queue, calls


@pytest.fixture
def heart(broker_prefix):
    beating = Heart.from_url(
        django_settings.CELERY_BROKER_URL,
        prefix=broker_prefix,
        name="gpu.test@here",
        queue="gpu.test",
        pool="test",
        backend="cuda",
        interval=1,
    )
    yield beating
    beating.stop()


def test_one_low_reading_is_measured_again_and_the_second_decides(readings, heart):
    queue, calls = readings
    queue += [_document(**LOW), _document()]
    status = preflight.calibrate(heart, SETTINGS, refresh=True)
    assert status.state == heartbeat.SERVING and calls == [(True, True), (True, False)]


def test_two_low_readings_take_the_worker_out_of_service_naming_the_ceiling(readings, heart):
    queue, calls = readings
    queue += [_document(**LOW), _document(**LOW)]
    status = preflight.calibrate(heart, SETTINGS, refresh=True)
    assert status.state == heartbeat.OUT_OF_SERVICE and len(calls) == 2
    assert any("BF16" in problem for problem in status.problems), status.problems


def test_a_young_healthy_cached_calibration_answers_alone(readings, heart):
    queue, calls = readings
    queue += [_document(age_s=600)]
    assert preflight.calibrate(heart, SETTINGS).state == heartbeat.SERVING and calls == [(False, True)]


def test_a_low_cached_calibration_is_measured_now_and_once_more_if_still_low(readings, heart):
    queue, calls = readings
    queue += [_document(age_s=600, **LOW), _document(**LOW), _document()]
    assert preflight.calibrate(heart, SETTINGS).state == heartbeat.SERVING
    assert calls == [(False, True), (True, False), (True, False)]


def test_a_cached_calibration_too_old_to_serve_from_is_measured_now(readings, heart):
    queue, calls = readings
    queue += [_document(age_s=SETTINGS.calibration_serve_age + 60), _document()]
    assert preflight.calibrate(heart, SETTINGS).state == heartbeat.SERVING
    assert calls == [(False, True), (True, False)]


class _Ended:
    def join(self, timeout: float | None = None) -> None:
        """The background measurement had already ended (it reads a prepared queue): nothing to wait for."""


def _background_remeasure() -> threading.Thread | _Ended:
    # a timing race otherwise: the thread can end before this looks for it (CI, 2026-12-07)
    return next((t for t in threading.enumerate() if t.name == "warplab-recalibrate"), _Ended())


def test_an_aged_healthy_cache_serves_at_once_while_the_slice_is_measured_again_behind_it(readings, heart):
    queue, calls = readings
    queue += [_document(age_s=SETTINGS.calibration_max_age + 60), _document()]
    status = preflight.calibrate(heart, SETTINGS)
    assert status.state == heartbeat.SERVING and calls[0] == (False, True)
    _background_remeasure().join(timeout=10)
    assert calls == [(False, True), (True, False)] and heart.status.state == heartbeat.SERVING
    assert heart.status.measured_at != status.measured_at, "the fresh measurement replaced the cached one"


def test_a_sick_background_measurement_takes_the_serving_worker_out_of_service(readings, heart, broker_prefix):
    queue, calls = readings
    queue += [_document(age_s=SETTINGS.calibration_max_age + 60), _document(**LOW), _document(**LOW)]
    assert preflight.calibrate(heart, SETTINGS).state == heartbeat.SERVING
    _background_remeasure().join(timeout=10)
    assert calls == [(False, True), (True, False), (True, False)], "a low reading gets its second chance"
    published = json.loads(heart.client.get(protocol.heartbeat_key(broker_prefix, "gpu.test@here")))
    assert published["state"] == heartbeat.OUT_OF_SERVICE and any("BF16" in p for p in published["problems"])


@pytest.fixture
def cache_here(monkeypatch, tmp_path):
    """A young healthy calibration of this GPU found through NVML, and a seed an earlier warm-up filled."""
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "harness.cubin").write_bytes(b"compiled before")
    monkeypatch.setenv("WARPLAB_KERNEL_CACHE", str(seed))
    found: list[dict | None] = [_document(age_s=600)]
    monkeypatch.setattr(calibrate, "find_cached", lambda *a, **k: found[0])
    return seed, found


def _background_warm() -> threading.Thread | _Ended:
    return next((t for t in threading.enumerate() if t.name == "warplab-warm-seed"), _Ended())


def test_a_young_cache_found_here_serves_before_any_child_and_the_seed_is_warmed_behind_it(readings, heart, cache_here):
    queue, calls = readings
    queue += [_document(age_s=600)]  # what the warm-up's child prints: the same cached document
    status = preflight.calibrate(heart, SETTINGS)
    assert status.state == heartbeat.SERVING and status.problems == []
    _background_warm().join(timeout=10)
    assert calls == [(False, True)]  # one child, warming the seed, after the worker was serving
    assert heart.status.state != heartbeat.OUT_OF_SERVICE


def test_a_warm_up_child_that_fails_behind_a_serving_worker_takes_it_out_of_service(
    readings, heart, cache_here, monkeypatch
):
    monkeypatch.setattr(preflight, "_calibrate_once", lambda *a, **k: (None, "`calibrate` exited 1: no CUDA device"))
    assert preflight.calibrate(heart, SETTINGS).state == heartbeat.SERVING
    _background_warm().join(timeout=10)
    assert heart.status.state == heartbeat.OUT_OF_SERVICE
    assert any("no CUDA device" in problem for problem in heart.status.problems), heart.status.problems


def test_a_seed_never_filled_is_filled_by_the_child_before_the_worker_serves(readings, heart, cache_here):
    seed, _ = cache_here
    for entry in seed.iterdir():
        entry.unlink()
    queue, calls = readings
    queue += [_document(age_s=600)]
    assert preflight.calibrate(heart, SETTINGS).state == heartbeat.SERVING
    assert calls == [(False, True)] and _background_warm().__class__ is _Ended  # in the start, not behind it


def test_a_low_cache_found_here_is_left_to_the_child(readings, heart, cache_here):
    _, found = cache_here
    found[0] = _document(age_s=600, **LOW)
    queue, calls = readings
    queue += [_document(age_s=600, **LOW), _document()]
    assert preflight.calibrate(heart, SETTINGS).state == heartbeat.SERVING
    assert calls == [(False, True), (True, False)]  # measured now, as a low cache always was
