"""The Celery service: consume one slice's queue, run each job in the engine, report to the web queue.

Events go to the web side as `labs.record_events` tasks on the `web` queue, a
run's events that came within `event_linger_seconds` of each other in one task;
there they are stored and broadcast on the submission's channel-layer group; the
final event travels with the result (`labs.record_result`) so that a viewer who
is told `done` can already read the stored result. Nothing here imports Django.

Before it runs a delivery the worker claims it from the web side's job ledger
(`labs.claim_run`, answered through the result backend; `labs.runs.ledger` says
why): a finished run or one another delivery holds is not run again, a run past
its attempt cap ends there, and the attempt number the claim grants goes with
every report, so a lost attempt's stragglers are dropped. With no answer the
delivery goes back to the queue. A pool process dies with the worker's main
process (and its sandbox with it), so a killed worker leaves nothing running.

Each worker publishes a heartbeat (`gpu_worker.worker.heartbeat`) from start to stop.
A cuda worker calibrates before it consumes anything (`gpu_worker.worker.preflight`):
an unhealthy slice stays out of service, measuring again every
`recalibrate_seconds`, until it is healthy; a sim worker serves at once.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from celery import Celery
from celery.exceptions import Reject, SoftTimeLimitExceeded
from celery.signals import worker_process_init
from celery.utils.nodenames import host_format
from pydantic import ValidationError

from gpu_worker.isolation import placement, sandbox, spare
from gpu_worker.measurement import gpu_busy, gpu_lock
from gpu_worker.protocol import Backend, Event, Job, Result
from gpu_worker.settings import WorkerSettings
from gpu_worker.worker import heartbeat, preflight
from gpu_worker.worker.heartbeat import Heart

log = logging.getLogger(__name__)
settings = WorkerSettings()

# Not the process's current app on import: a process that only imports this module (a test session beside the
# web side's tests) keeps its own current app. The worker makes it current when it starts (`worker_main`).
app = Celery(
    "gpu_worker",
    broker=settings.broker_url,
    backend=settings.result_backend or settings.broker_url,
    set_as_current=False,
)
app.conf.update(
    task_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    worker_concurrency=1,
    task_soft_time_limit=settings.soft_time_limit,
    task_time_limit=settings.hard_time_limit,
    broker_transport_options={
        "visibility_timeout": settings.visibility_timeout,
        "global_keyprefix": settings.broker_prefix,
        # how often a consumer gives the broker back jobs a dead consumer took (past the visibility timeout)
        "unacked_restore_interval": settings.restore_seconds,
        "unacked_restore_throttle": 1,
    },
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=True,
    result_expires=600,
)
CLAIM_TASK = "labs.claim_run"


# The result must outlast a broker restart (about a minute of reconnecting); a progress event is not worth a run.
RESULT_RETRY = {"max_retries": 60, "interval_start": 0.5, "interval_step": 0.5, "interval_max": 1.0}


def _report(name: str, *args: Any, patient: bool = False) -> None:
    policy = RESULT_RETRY if patient else None
    app.send_task(name, args=list(args), queue=settings.results_queue, retry_policy=policy)


EVENTS_TASK = "labs.record_events"


class _Reporter:
    """Sends a run's events in batches; keeps the final one back to travel with the result, sent once (`finish`).

    The first event not yet sent starts a timer of `event_linger_seconds`; what the engine tells meanwhile joins
    it, and the timer sends them all as one `labs.record_events` task (`flush`). Sending holds the reporter's
    lock, so batches leave in order and `finish` sends what is pending before the result.

    An event told after the final one but numbered before it (the CPU tier's SASS listing, `engine._EarlyVerdict`)
    is sent too: the web side keeps it in its place and merges it into the stored result.
    """

    def __init__(
        self,
        submission_id: int,
        attempt: int | None = None,
        linger: float | None = None,
        started_facts: dict[str, Any] | None = None,
    ):
        self.submission_id, self.attempt = submission_id, attempt
        self.started_facts = started_facts or {}  # the worker's own, added to the run's `started` event
        self.linger = settings.event_linger_seconds if linger is None else linger
        self.seq_offset = 1000 * ((attempt or 1) - 1)  # a rerun's events must not collide with the lost run's
        self.final: dict | None = None
        self.last_seq = 1
        self.finished = False
        self.pending: list[dict] = []
        self.lock = threading.RLock()
        self.timer: threading.Timer | None = None

    def __call__(self, event: Event) -> None:
        payload = event.to_wire()
        payload["seq"] += self.seq_offset
        with self.lock:
            if self.final is not None and payload["seq"] >= self.final["seq"]:  # the web side would drop it
                log.warning(
                    "event %s of submission %s after its final event dropped", payload["type"], self.submission_id
                )
                return
            self.last_seq = max(self.last_seq, payload["seq"])
            if payload["type"] == "started":
                payload.update(self.started_facts)
            if payload["type"] in ("done", "error"):
                self.final = self.final or payload
                return
            self.pending.append(payload)
            if self.linger <= 0:
                self.flush()
            elif self.timer is None:
                self.timer = threading.Timer(self.linger, self.flush)
                self.timer.daemon = True
                self.timer.start()

    def flush(self) -> None:
        """Send the pending events as one task now (the timer's work; `finish` and the task's end call it too)."""
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            batch, self.pending = self.pending, []
            if not batch:
                return
            try:
                _report(EVENTS_TASK, self.submission_id, batch, self.attempt)
            except Exception as exc:  # the broker is away: the run goes on, its result will say how it ended
                log.warning(
                    "%d event(s) of submission %s dropped (%s: %s)",
                    len(batch),
                    self.submission_id,
                    type(exc).__name__,
                    exc,
                )

    def finish(self, result: Result) -> None:
        with self.lock:
            if self.finished:  # reported already, as the engine told the final event (`run_job`'s `on_result`)
                self.flush()  # a late listing told since
                return
            self.finished = True
            self.flush()
            kind = "error" if result.verdict == "error" else "done"
            fallback = Event.of(kind, self.last_seq + 1, verdict=result.verdict, message=result.message)
            final = self.final or fallback.to_wire()
            _report("labs.record_result", self.submission_id, result.to_wire(), final, self.attempt, patient=True)


@functools.cache
def _busy_ledger() -> tuple[redis.Redis, str] | None:
    """This worker's GPU in the broker's busy ledger (`measurement.gpu_busy`): (Redis, GPU uuid), or None."""
    uuid = gpu_lock.worker_gpu_uuid()
    if uuid is None:
        return None
    return redis.Redis.from_url(settings.broker_url, socket_timeout=2), uuid


def _note_gpu_busy(result: Result) -> None:
    """Add the seconds this job held the GPU's timing lock to the GPU's ledger; an outage costs the figure only."""
    held = float((result.timing or {}).get("lock_held_seconds") or 0.0)
    if held <= 0 or settings.backend != "cuda":
        return
    try:
        ledger = _busy_ledger()
        if ledger is not None:
            gpu_busy.record(ledger[0], settings.broker_prefix, ledger[1], held)
    except (redis.RedisError, OSError) as exc:
        log.warning("GPU busy time of submission %s not recorded: %s", result.submission_id, exc)


def _discard(event: Event) -> None:
    """An emit that tells no one: for work after a run's final event."""


def _claim(submission_id: int, task_id: str) -> dict:
    """The ledger's answer for this delivery; with none in `claim_timeout`, the delivery goes back to the queue."""
    try:
        answer = app.send_task(
            CLAIM_TASK, args=[submission_id, task_id], queue=settings.results_queue, expires=settings.claim_timeout
        )
        claim = answer.get(timeout=settings.claim_timeout, disable_sync_subtasks=False)
        answer.forget()
        return dict(claim)
    except Exception as exc:  # the web side, its database or the broker is away: try again later
        log.warning("no claim for submission %s (%s: %s); back to the queue", submission_id, type(exc).__name__, exc)
        time.sleep(settings.claim_retry_seconds)
        raise Reject(f"no claim answer: {exc}", requeue=True) from exc


@worker_process_init.connect
def _start_first_spare(**_: Any) -> None:
    """In the pool process, before it takes a task: it dies with the worker, and the first job finds a spare too.

    The pool process runs its tasks on this same (main) thread, which the spare's
    `--die-with-parent` needs (see `gpu_worker.isolation.spare`).
    """
    from gpu_worker.engine import start_first_spare
    from gpu_worker.figures import analysis

    sandbox.die_with_parent()  # a pool process never outlives a killed worker
    if start_first_spare(settings.backend):
        log.info("a spare sandbox is starting for the first job")
    analysis.warm_up()  # while the spare imports: the first job's figures cost what the later ones do


def _worker_error(submission_id: int, message: str, backend: Backend | None = None, device: str = "unknown") -> Result:
    """An infrastructure `error` result: the run ended for a reason on our side, said in `message`."""
    return Result.error(submission_id, message, backend or settings.backend, device)


@app.task(name="gpu_worker.run_job", bind=True)
def run_job(self: Any, payload: dict) -> str:
    """Run one learner job; the verdict is returned, the facts go to the web queue."""
    from gpu_worker.engine import run_job as run_in_engine

    submission_id = int(payload.get("submission_id", 0))
    try:
        job = Job.model_validate(payload)
    except ValidationError as exc:
        broken = f"The job did not match the contract: {exc.error_count()} problem(s): {exc.errors()[0]['msg']}"
        result = Result.of(submission_id, "rejected", settings.backend, "none", broken)
        _Reporter(submission_id).finish(result)
        return result.verdict
    received = time.time()
    claim = _claim(job.submission_id, str(self.request.id))
    if not claim["run"]:
        log.info("submission %s not run: %s", job.submission_id, claim["reason"])
        return "not run"
    # when this worker took the delivery and how long the ledger took to grant it: the benchmarks split a
    # job's wait for a worker from its claim's round trip through the web queue with them
    facts = {"received_at": round(received, 4), "claim_seconds": round(time.time() - received, 4)}
    reporter = _Reporter(job.submission_id, attempt=int(claim["attempt"]), started_facts=facts)
    if claim["attempt"] > 1:
        again = f"A worker was lost during this run; it is being run again (attempt {claim['attempt']})."
        reporter(Event.of("log", 1, message=again))
    started = time.monotonic()
    backend = job.backend or settings.backend
    owned = len(placement.worker_gpus(declared=settings.gpus))
    if (why := placement.refusal(job.exercise.limits.gpus, backend, owned)) is not None:
        result = _worker_error(job.submission_id, why, backend=backend, device="none")
        reporter.finish(result)
        return result.verdict
    try:
        result = run_in_engine(job, reporter, backend=backend, on_result=reporter.finish)
    except SoftTimeLimitExceeded:
        result = _worker_error(job.submission_id, f"The worker gave up on this run after {settings.soft_time_limit} s.")
    except Exception as exc:  # an engine bug must still end the run, never leave it running
        log.exception("engine failed on submission %s", job.submission_id)
        why = f"The worker failed outside your code ({type(exc).__name__}); it has been logged."
        result = _worker_error(job.submission_id, why)
    result.elapsed_seconds = result.elapsed_seconds or round(time.monotonic() - started, 3)
    _note_gpu_busy(result)
    log.info(
        "submission %s: %s in %.2f s: %s",
        job.submission_id,
        result.verdict,
        result.elapsed_seconds,
        result.message[:500],
    )
    reporter.finish(result)
    return result.verdict


@app.task(name="gpu_worker.profile_run")
def profile_run(payload: dict) -> str:
    """Nsight Compute for a judged run (the profile lane): a `profile` event, then the facts to the web queue."""
    from gpu_worker.engine import run_profile

    job = Job.model_validate(payload)
    try:
        # The run's story ended with its verdict: the facts go into its result (labs.record_profile), read
        # back by the result page, and its `profile` event is not sent as a step after `done`.
        facts = run_profile(job, _discard, backend=job.backend or settings.backend)
    except Exception as exc:  # ours; the run's verdict stands whatever happens here
        log.exception("profile of submission %s failed", job.submission_id)
        facts = {"available": False, "reason": f"the profiling run failed on the worker ({type(exc).__name__})"}
    _report("labs.record_profile", job.submission_id, facts or {"available": False, "reason": "not a GPU worker"})
    return "profiled" if (facts or {}).get("available") else "unavailable"


def _serve_profile_lane(queue: str, loglevel: str, name: str | None) -> None:
    os.environ[spare.ENV] = "0"  # a profile child is started under ncu, never from a spare
    name = name or host_format(f"{queue}@%h")
    app.worker_main(
        ["worker", "-Q", queue, "--concurrency", "1", "--prefetch-multiplier", "1", "-n", name, "--loglevel", loglevel]
        + ["--without-gossip", "--without-mingle"]
    )


def _leave(signum: int, frame: Any) -> None:
    """Until Celery installs its own handlers: stop as its warm shutdown does (exit 0), the heartbeat dropped."""
    log.info("worker told to stop (signal %d) before it consumed anything", signum)
    raise SystemExit(0)


def _gpu_probe(uuid: str | None) -> Callable[[], dict[str, Any]]:
    """The heartbeat's GPU-state reader: one NVML handle, found by the calibrated UUID, read at every beat."""
    from gpu_worker.measurement.device_info import Nvml, live_state

    nvml = Nvml(uuid=uuid)
    return lambda: live_state(nvml)


def serve(pool: str | None = None, loglevel: str = "INFO", name: str | None = None, lane: str = "verdict") -> None:
    """Start a worker for this slice's queue: concurrency 1, prefetch 1, late acknowledgement.

    A cuda worker calibrates first and consumes only once healthy; its heartbeat says so meanwhile.
    `lane="profile"` serves `<queue>.profile` instead: Nsight Compute runs asked for after a verdict, in a
    process of their own beside the verdict worker (the profiled launch takes the per-GPU lock, as timing
    does), so a profile never stands in front of a learner's verdict; it neither calibrates nor beats.
    """
    queue = settings.queue if pool is None else ("sim" if pool == "sim" else f"gpu.{pool}")
    # Warm starts: spare sandboxes, owned by the pool process that runs the tasks (forked from this one), on by
    # default in a worker (the environment can still say 0 or 1), and only there: a process that merely imports
    # this module (a test of the reporter) keeps its own default. On the H200 a spare takes the first figure from
    # 1.4 s to 0.23 s (C++) and, with Numba's compiler warmed in it, from 2.2 s to 0.22 s (Numba), p50 through
    # the whole pipeline (docs/benchmarks.md, runs 16 and 17).
    spare.set_default(True)
    if lane == "profile":
        _serve_profile_lane(f"{queue}.profile", loglevel, name)
        return
    # Celery sets up logging only in worker_main; calibration comes before it and must be heard
    logging.basicConfig(level=loglevel.upper(), format="[%(asctime)s: %(levelname)s/%(processName)s] %(message)s")
    name = name or settings.worker_name or host_format(f"{queue}@%h")
    heart = Heart.from_url(
        settings.broker_url,
        prefix=settings.broker_prefix,
        name=name,
        queue=queue,
        pool=pool or settings.pool,
        backend=settings.backend,
        interval=settings.heartbeat_seconds,
        slice_kind=settings.slice_kind,
    )
    for signum in (signal.SIGTERM, signal.SIGINT):  # Celery replaces these once the worker starts
        signal.signal(signum, _leave)
    try:
        cuda = settings.backend == "cuda"
        status = preflight.calibrate_until_healthy(heart, settings) if cuda else heartbeat.simulator()
        if cuda:
            heart.probe = _gpu_probe(status.gpu_uuid)
        heart.set(status)
        app.steps["worker"].add(heartbeat.bootstep(heart))
        app.worker_main(
            [
                "worker",
                "-Q",
                queue,
                "--concurrency",
                "1",
                "--prefetch-multiplier",
                "1",
                "-n",
                name,
                "--loglevel",
                loglevel,
                "--without-gossip",
                "--without-mingle",
            ]
        )
    finally:  # however it ends; the bootstep has dropped the key already on a warm shutdown
        heart.stop()
