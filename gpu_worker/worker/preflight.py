"""Before a cuda worker consumes anything: calibrate its slice, and stay out of service while it is unhealthy.

Calibration runs `python -m gpu_worker calibrate --json --warm-kernel-cache` in
a subprocess, so that the worker process, which the Celery pool forks, never
creates a CUDA context; the same child fills the jobs' kernel-cache seed
(`gpu_worker.measurement.kernel_cache`). The cached document of this GPU and driver answers when it is younger
than `calibration_max_age` and healthy: read in the worker's own process through NVML
when the seed was filled before (`_young_cache_here`), the child then warming the
seed behind it; otherwise from the child, before the worker serves. A healthy one younger than
`calibration_serve_age` answers too, at once, while a thread measures the slice again
in the background (`calibrate --refresh` holds the GPU's timing lock, so no timed
job overlaps it); its outcome replaces the served one, and a slice found sick stops
taking work (`heartbeat.HeartbeatStep`). Otherwise the slice is measured now, and
a reading under the health rule is measured once more, after `remeasure_pause_seconds`
idle, before it counts.
`heartbeat.decide` turns the outcome into a state; while that is
`out_of_service`, the worker keeps beating and measures again every
`recalibrate_seconds`, consuming nothing until it is healthy.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
from typing import Any

from gpu_worker.protocol import WorkerStatus
from gpu_worker.settings import WorkerSettings
from gpu_worker.worker import heartbeat
from gpu_worker.worker.heartbeat import Heart


def _calibrate_once(
    heart: Heart, settings: WorkerSettings, refresh: bool, warm: bool = True
) -> tuple[dict | None, str | None]:
    """`calibrate --json` in a child, beating while it runs: (document, None) or (None, why not)."""
    argv = [sys.executable, "-m", "gpu_worker", "calibrate", "--json"]
    # the harness's kernels compiled into the jobs' seed cache, in this trusted child
    argv += ["--warm-kernel-cache"] if warm else []
    argv += ["--refresh"] if refresh else []
    deadline = time.monotonic() + settings.calibration_timeout
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        try:
            while True:
                try:
                    out, err = child.communicate(timeout=heart.interval)
                    break
                except subprocess.TimeoutExpired:
                    if time.monotonic() > deadline:
                        return None, f"it took longer than {settings.calibration_timeout:.0f} s"
                    heart.beat()
        finally:  # a timeout, or the worker told to stop: the measurement goes with it
            if child.poll() is None:
                child.kill()
    try:
        data = json.loads(out)
    except ValueError:
        data = None
    # `calibrate` exits 1 for an unhealthy slice too, with its document on stdout: the document decides
    if isinstance(data, dict) and isinstance(data.get("ceilings"), dict):
        return data, None
    last = next((line for line in reversed(err.splitlines()) if line.strip()), "no output")
    return None, f"`calibrate` exited {child.returncode}: {last.strip()[:300]}"


def _measured_before(data: dict[str, Any], moment: dt.datetime) -> bool:
    try:
        return dt.datetime.fromisoformat(data["measured_at"]) < moment
    except (KeyError, TypeError, ValueError):
        return True


def _ago(seconds: float) -> dt.datetime:
    return dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)


def calibrate(heart: Heart, settings: WorkerSettings, refresh: bool = False, background: bool = True) -> WorkerStatus:
    """One calibration: the cache of this GPU and driver if young and healthy (unless `refresh`), else measured now.

    With `background`, a healthy cache between `calibration_max_age` and `calibration_serve_age` old is
    served now and measured again by `remeasure_in_background`.
    """
    heart.set(heartbeat.calibrating(heart.status))
    if not refresh and background and (young := _young_cache_here(settings)) is not None:
        warm_in_background(heart, settings)
        return heartbeat.decide(young)
    data, error = _calibrate_once(heart, settings, refresh)
    if data is not None and data.get("from_cache"):
        cached = heartbeat.decide(data)
        if cached.healthy and not _measured_before(data, _ago(settings.calibration_max_age)):
            return cached
        if cached.healthy and background and not _measured_before(data, _ago(settings.calibration_serve_age)):
            remeasure_in_background(heart, settings)
            return cached
        # too old, or a cached bad measurement: it gets a second chance now (the seed is filled already)
        data, error = _calibrate_once(heart, settings, refresh=True, warm=False)
    return _second_chance(heart, settings, data, error)


def _young_cache_here(settings: WorkerSettings) -> dict | None:
    """This GPU's and driver's cached calibration, read in this process through NVML (no CUDA context, no child),
    when it is young and healthy and the jobs' kernel-cache seed holds what an earlier warm-up compiled; else None.

    The `calibrate` child costs a worker's start 1.7 s on an H100 (its Python, CuPy, a CUDA context, and the seed's
    kernels loaded again: run 32), and the cold worker's 5 s target was missed at 5.3 s in run 30. A seed that
    was never filled (a fresh machine) is filled before the worker serves, as before, so its first job finds it.
    """
    from gpu_worker.measurement import calibrate as calibration
    from gpu_worker.measurement import kernel_cache

    seed = kernel_cache.seed_dir()
    if not seed.is_dir() or not any(seed.iterdir()):
        return None
    data = calibration.find_cached()
    if data is None or _measured_before(data, _ago(settings.calibration_max_age)):
        return None
    data = {**data, "from_cache": True}
    return data if heartbeat.decide(data).healthy else None


def warm_in_background(heart: Heart, settings: WorkerSettings) -> threading.Thread:
    """The seed's kernels compiled again behind a worker that serves from its cache (labs added since its last
    start); a `calibrate` child that fails (the GPU unusable) takes the worker out of service, as at its start."""

    def warm() -> None:
        data, error = _calibrate_once(heart, settings, refresh=False, warm=True)
        status = heartbeat.decide(data, error)
        if not status.healthy:
            heart.set(status, note="the kernel-cache seed's warm-up, behind a worker serving from its cache, failed")

    thread = threading.Thread(target=warm, name="warplab-warm-seed", daemon=True)
    thread.start()
    return thread


def _second_chance(heart: Heart, settings: WorkerSettings, data: dict | None, error: str | None) -> WorkerStatus:
    if data is not None and not heartbeat.decide(data).healthy:
        # one low reading is not yet a sick slice: a card hot from earlier work reads its tensor rate
        # up to 12 % low (run 16), so it idles a little and is measured once more
        _idle(heart, settings.remeasure_pause_seconds)
        data, error = _calibrate_once(heart, settings, refresh=True, warm=False)
    return heartbeat.decide(data, error)


def remeasure_in_background(heart: Heart, settings: WorkerSettings) -> threading.Thread:
    """Measure the slice again in a daemon thread; publish what it decides when it is done.

    The worker serves meanwhile from the cached ceilings; a sick outcome (after its second chance)
    sets the heart out of service, which stops the worker consuming.
    """

    def remeasure() -> None:
        data, error = _calibrate_once(heart, settings, refresh=True, warm=False)
        status = _second_chance(heart, settings, data, error)
        heart.set(status, note="measured again in the background while serving from the cache")

    thread = threading.Thread(target=remeasure, name="warplab-recalibrate", daemon=True)
    thread.start()
    return thread


def _idle(heart: Heart, seconds: float) -> None:
    """Wait, beating."""
    until = time.monotonic() + seconds
    while (left := until - time.monotonic()) > 0:
        time.sleep(min(heart.interval, left))
        heart.beat()


def calibrate_until_healthy(heart: Heart, settings: WorkerSettings) -> WorkerStatus:
    """Calibrate; while out of service, keep beating and measure again every `recalibrate_seconds`."""
    refresh = False  # at start the cache may answer; a retry always measures
    while (status := calibrate(heart, settings, refresh)).state != heartbeat.SERVING:
        refresh = True
        heart.set(status, note=f"consuming nothing; measuring again in {settings.recalibrate_seconds:g} s")
        _idle(heart, settings.recalibrate_seconds)
    return status
