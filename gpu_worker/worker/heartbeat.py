"""The worker's heartbeat: what state it is in, decided from its calibration, published to Redis.

A worker is `starting`, `calibrating` (measuring its slice's ceilings before it
consumes anything), `serving`, `draining` (healthy, but an admin stopped it taking new jobs
with Celery's `cancel_consumer`; the job in flight finishes), or `out_of_service` (its calibration failed, or
some ceiling is more than 10% under the anchor measured on the same kind of GPU,
see `gpu_worker.measurement.calibrate.healthy`). `decide` turns a calibration outcome into a
`WorkerStatus`; `Heart` writes the heartbeat document (`gpu_worker.protocol.heartbeat_document`,
where the web side reads its shape) as JSON to the broker's Redis at
`<broker_prefix>warplab:worker:<name>`, with a TTL of three intervals so a dead
worker's key goes away by itself, and deletes it on a clean stop. While the
Celery worker runs, `bootstep` keeps it beating on the worker's own timer.
Each beat also carries the slice's kind and its GPU's live state through NVML
(`Heart.probe`, `device_info.live_state`). The web side reads these keys for its
fleet page and dashboard (`labs.fleet.heartbeats`).

The state also gates work: a probe that fails (NVML no longer answers for the
slice, or raises) takes a serving worker out of service until it answers again,
and so does a sick calibration measured in the background (`preflight`). While
the worker is not serving, `HeartbeatStep` stops consuming its queue and kills the
pool process of the job in flight, so Celery puts that job back on the queue
(`task_reject_on_worker_lost`) for a healthy worker; serving again, it consumes again.
A queue cancelled or added by someone else (the fleet page's drain and undrain, through Celery's remote
control) is noticed at the next tick: the worker says `draining` until its queue is added back, and
coming back into service does not undo a drain.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import redis
from celery import bootsteps
from celery.worker import state as worker_state

from gpu_worker.measurement import gpu_busy
from gpu_worker.measurement.calibrate import CEILING_INFO, anchors_for, healthy
from gpu_worker.protocol import (
    CALIBRATING,
    DRAINING,
    OUT_OF_SERVICE,
    SERVING,
    STARTING,
    WorkerStatus,
    heartbeat_document,
    heartbeat_key,
)

log = logging.getLogger(__name__)

REDIS_TIMEOUT = 5.0  # seconds a beat may wait for Redis: it runs on the worker's event loop
#: The ceilings in words, for problems a person reads.
LABELS = {c.key: c.words for c in CEILING_INFO}


def simulator() -> WorkerStatus:
    """A sim worker measures nothing: it serves at once, without ceilings."""
    return WorkerStatus(state=SERVING, device="simulator (CPU)", healthy=True)


def starting() -> WorkerStatus:
    """Before anything is known: the worker is up, its slice not yet measured."""
    return WorkerStatus(state=STARTING, device="GPU (not measured yet)")


def calibrating(previous: WorkerStatus) -> WorkerStatus:
    """Measuring (again): what the last calibration said stays visible meanwhile."""
    return replace(previous, state=CALIBRATING)


def _in_words(problem: str) -> str:
    key, _, rest = problem.partition(":")
    return f"{LABELS.get(key, key)}:{rest}" if rest else problem


def decide(calibration: dict[str, Any] | None, error: str | None = None) -> WorkerStatus:
    """From a calibration document (or the error that stopped it): serving, or out of service and why."""
    if calibration is None or error:
        reason = error or "it gave no ceilings"
        problems = [f"calibration failed: {reason}"]
        return WorkerStatus(state=OUT_OF_SERVICE, device="GPU (calibration failed)", healthy=False, problems=problems)
    key = calibration.get("key", {})
    name = key.get("name", "unknown GPU")
    ceilings = dict(calibration.get("ceilings") or {})
    anchors = anchors_for(name)
    ok, problems = healthy(ceilings, anchors, document=calibration)
    return WorkerStatus(
        state=SERVING if ok else OUT_OF_SERVICE,
        device=name,
        ceilings=ceilings,
        anchors=anchors,
        measured_at=calibration.get("measured_at"),
        healthy=ok,
        problems=[_in_words(p) for p in problems],
        gpu_uuid=key.get("uuid"),
        device_facts=_facts(calibration.get("device")),
    )


FACT_KEYS = (
    "name", "arch", "sm_count", "l2_bytes", "memory_bytes", "shared_per_sm", "max_shared_per_block_optin",
    "regs_per_sm", "max_threads_per_sm", "sm_clock_max_mhz", "mig_mode",
)  # fmt: skip


def _facts(device: Any) -> dict[str, Any] | None:
    """The calibration's device facts that describe the slice's hardware (no UUID or driver: those are keys)."""
    if not isinstance(device, dict):
        return None
    return {k: device[k] for k in FACT_KEYS if k in device}


def _summary(status: WorkerStatus) -> str:
    if status.state == CALIBRATING:
        return "measuring this slice's ceilings before consuming anything"
    if status.state == OUT_OF_SERVICE:
        return "; ".join(status.problems)
    if status.state == SERVING and status.ceilings:
        c = status.ceilings
        rates = f"copy {c.get('copy_bytes_per_s', 0) / 1e9:.0f} GB/s, FP32 {c.get('fp32_flops', 0) / 1e12:.1f} TFLOP/s"
        checked = "within 10% of its anchors" if status.anchors else "no anchors for this GPU: not checked"
        return f"{status.device}, {rates}, {checked}"
    return status.device


class Heart:
    """One worker's heartbeat key: `set` a status (logged when it changes), `beat` to renew it, `stop` to drop it."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        prefix: str,
        name: str,
        queue: str,
        pool: str,
        backend: str,
        interval: float,
        slice_kind: str = "",
    ) -> None:
        self.client, self.key, self.interval, self.prefix = client, heartbeat_key(prefix, name), interval, prefix
        self.identity = {"name": name, "queue": queue, "pool": pool, "backend": backend, "slice_kind": slice_kind}
        self.status = starting()
        #: An admin stopped this worker taking new jobs (`HeartbeatStep` notices); a serving one says "draining".
        self.draining = False
        #: Called at every beat for the GPU's live state (`device_info.live_state`); None: no GPU state.
        self.probe: Callable[[], dict[str, Any]] | None = None
        self._before_probe_failed: WorkerStatus | None = None  # the serving status a failed probe suspended

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Heart:
        """A heart on the broker's Redis; a beat waits at most a few seconds for it, never blocking the worker."""
        client = redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT)
        return cls(client, **kwargs)

    @property
    def ttl_ms(self) -> int:
        """Three intervals: one late or lost beat does not drop the worker from the fleet."""
        return max(1000, int(3000 * self.interval))

    def set(self, status: WorkerStatus, note: str = "") -> None:
        """Publish `status` now; a change of state is logged, with `note` after it."""
        self._change(status, note)
        self.beat()

    def _change(self, status: WorkerStatus, note: str = "") -> None:
        """Take `status` as the worker's, logging a change of state; the next beat publishes it."""
        if status.state != self.status.state:
            log.log(
                logging.WARNING if status.state == OUT_OF_SERVICE else logging.INFO,
                "worker %s is %s: %s%s",
                self.identity["name"],
                status.state.replace("_", " "),
                _summary(status),
                f" ({note})" if note else "",
            )
        self.status = status

    def beat(self) -> None:
        """Write the document again; a Redis outage costs beats, never the worker."""
        gpu_state = None
        if self.probe is not None:
            try:
                gpu_state = self.probe()
            except Exception as exc:  # NVML failing must cost the GPU state, never the beat
                gpu_state = {"nvml": False, "problem": f"NVML failed: {type(exc).__name__}: {exc}"}
            self._judge_probe(gpu_state)
        shown = replace(self.status, state=DRAINING) if self.draining and self.status.state == SERVING else self.status
        try:
            doc = heartbeat_document(shown, **self.identity, gpu_state=gpu_state, gpu_busy=self._busy())
            self.client.set(self.key, json.dumps(doc), px=self.ttl_ms)
        except redis.RedisError as exc:
            log.warning("heartbeat %s not written: %s", self.key, exc)

    def drain(self, draining: bool) -> None:
        """Say (from the next beat) whether an admin has stopped this worker taking new jobs."""
        if draining != self.draining:
            words = "draining: the job in flight finishes, nothing new starts" if draining else "taking jobs again"
            log.info("worker %s is %s", self.identity["name"], words)
        self.draining = draining

    def _busy(self) -> dict[str, float] | None:
        """The GPU's timing-lock duty cycle over the last minute, every worker of it together (`gpu_busy`)."""
        if not self.status.gpu_uuid:
            return None
        return gpu_busy.duty_cycle(self.client, self.prefix, self.status.gpu_uuid)

    def _judge_probe(self, gpu_state: dict[str, Any]) -> None:
        """A failed probe suspends serving; the probe answering again restores the status it suspended."""
        problem = gpu_state.get("problem") if isinstance(gpu_state, dict) else None
        if problem and self.status.state == SERVING:
            self._before_probe_failed = self.status
            self._change(probe_failed(self.status, problem), note="consuming nothing; the job in flight goes back")
        elif not problem and self._before_probe_failed is not None and self.status.state == OUT_OF_SERVICE:
            serving, self._before_probe_failed = self._before_probe_failed, None
            self._change(serving, note="the GPU answers again")

    def stop(self) -> None:
        """Drop the key, so the worker leaves the fleet at once rather than when its TTL runs out."""
        try:
            self.client.delete(self.key)
        except redis.RedisError as exc:
            log.warning("heartbeat %s not deleted (it expires in %d s): %s", self.key, self.ttl_ms // 1000, exc)


def probe_failed(status: WorkerStatus, problem: str) -> WorkerStatus:
    """A serving status suspended because the GPU's probe failed."""
    return replace(status, state=OUT_OF_SERVICE, healthy=False, problems=[f"GPU probe failed: {problem}"])


def requeue_jobs_in_flight() -> list[int]:
    """Kill the pool processes running jobs, so each job goes back on its queue; their pids.

    Late acknowledgement with `task_reject_on_worker_lost` makes Celery reject a job whose pool
    process died, and the broker delivers it again to another worker. The sandbox dies with the
    process that started it (bubblewrap's `--die-with-parent`).
    """
    pids = sorted({r.worker_pid for r in list(worker_state.active_requests) if r.worker_pid})
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return pids


class HeartbeatStep(bootsteps.StartStopStep):
    """Beats on the Celery worker's timer while the worker runs, and consumes only while serving.

    Its `heart` is bound by `bootstep`.
    """

    requires = {"celery.worker.components:Timer"}
    heart: Heart

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None
        self.consuming = True  # as this step last left the queue: the worker starts consuming its -Q queue

    def start(self, parent: Any) -> None:
        self.heart.beat()
        self.tref = parent.timer.call_repeatedly(self.heart.interval, self.tick, (parent,))

    def tick(self, parent: Any) -> None:
        """One beat (which judges the GPU's probe), then consume or stop consuming as the heart's state and an
        admin's drain say; a drain or undrain noticed is beaten at once."""
        self.heart.beat()
        consumer = getattr(parent, "consumer", None)
        if consumer is None or getattr(consumer, "task_consumer", None) is None:
            return  # the consumer has not started yet
        if self.steer(consumer):
            self.heart.beat()

    def steer(self, consumer: Any) -> bool:
        """Take an admin's cancel_consumer or add_consumer as a drain or undrain, then follow the heart's state;
        whether a drain or undrain was noticed."""
        queue = self.heart.identity["queue"]
        consumed = consumer.task_consumer.consuming_from(queue)
        noticed = consumed != self.consuming  # not this step's doing: the admin's
        if noticed:
            self.heart.drain(not consumed)
            self.consuming = consumed
        serving = self.heart.status.state == SERVING
        if self.consuming and not serving:
            consumer.cancel_task_queue(queue)
            self.consuming = False
            pids = requeue_jobs_in_flight()
            log.warning("worker %s stopped consuming %s; jobs in flight put back: %d", self.heart.key, queue, len(pids))
        elif serving and not self.consuming and not self.heart.draining:
            consumer.add_task_queue(queue)
            self.consuming = True
            log.info("worker %s consumes %s again", self.heart.key, queue)
        return noticed

    def stop(self, parent: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None
        self.heart.stop()

    terminate = stop  # a cold shutdown drops the key too


def bootstep(heart: Heart) -> type[HeartbeatStep]:
    """A worker bootstep that keeps `heart` beating: `app.steps["worker"].add(bootstep(heart))`."""
    return type("WarpLabHeartbeat", (HeartbeatStep,), {"heart": heart})
