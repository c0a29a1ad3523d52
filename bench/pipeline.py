"""The whole pipeline for real: Redis, the web-queue worker, a GPU (or sim) worker, jobs through Celery.

    source bench/device_setup.sh && python3 bench/pipeline.py --out "$OUT"          # on the GPU machine
    .venv/bin/python bench/pipeline.py --backend sim --out /tmp/pipeline-sim        # here, on the CPU

It starts a private redis-server (unless `--redis-url`), migrates a temporary SQLite database, loads the
labs, starts the web-queue Celery worker and then the execution worker (`python -m gpu_worker serve`),
timing that cold start until the worker is ready (Celery's ` ready.` line, and the worker's heartbeat key
`warplab:worker:<name>` when it publishes one). Then, with Django set up in this process, it submits the
vector-add reference through `labs.runs.services.submit_run` one job at a time (so no job waits behind another)
and listens on the channel layer's `submission.<id>` group, as the WebSocket consumer does, timing each
job's events from the submit: `started`, `compiled`, the first `figure` (the occupancy graphs), the first
`check`, `done`. `--think S` waits S seconds between a verdict and the next submit, as a learner reading it does.

The first job after the cold start is reported on its own; then `--rounds` rounds of every language
(cuda and numba on the GPU; numba on the simulator, or `--languages numba,cuda`: CUDA C++ there is compiled
and analysed, its reference's verdict `not_run`). Writes
`pipeline.md`, `pipeline.json` and `services.log` (the services' logs, merged) to `--out`. Exits 1 when
a job was not accepted or was lost. `--spare 1` turns on the worker's spare sandboxes (warm starts).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import ctypes
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import host_cpu  # noqa: E402
from gpu_worker.isolation.child import OUTSIDE_STEP  # noqa: E402
from gpu_worker.measurement import gpu_lock  # noqa: E402

EXERCISE = "vector-add"
FINAL = ("done", "error")
OTHER_PROCESSES = "the sandbox's other processes"  # a spare's tree at the hand-over less its child's own count
NOT_READY = ("starting", "calibrating", "warming", "initialising", "initializing")  # heartbeat states
TARGETS = {"p50": 1.5, "p95": 4.0, "cold_ready": 5.0, "static_p50": 0.6, "verdict_p50": 1.5}  # seconds (the issues')


def _die_with_parent() -> None:
    """In each child: SIGTERM when this process dies, so a killed bench leaves no stale service."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Service:
    """One child process in its own process group, its output in a log file under --out."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Path):
        self.name, self.log_path = name, log_path
        self.log = log_path.open("w")
        self.offset = 0
        self.spawned = time.monotonic()
        self.process = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )

    def saw(self, text: str) -> bool:
        """Whether `text` has appeared in the log (read from the start each time: logs stay small here)."""
        return text in self.log_path.read_text(errors="replace")

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{tail}")

    def wait_for(self, text: str, timeout: float) -> float:
        """Seconds from the spawn until `text` is in the log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.saw(text):
                return time.monotonic() - self.spawned
            self.check_alive()
            time.sleep(0.01)
        raise RuntimeError(f"{self.name}: no {text!r} after {timeout:.0f} s:\n{self.log_path.read_text()[-3000:]}")

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM to the group (Celery's warm shutdown), SIGKILL after `grace` seconds."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.log.close()


def start_redis(port: int, out: Path) -> tuple[Service, str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not on PATH (on the GPU machine: source bench/device_setup.sh)")
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    service = Service("redis", argv, dict(os.environ), out / "redis.log")
    url = f"redis://127.0.0.1:{port}/0"
    service.wait_for("Ready to accept connections", timeout=20)
    return service, url


def _heartbeats(client: Any, prefix: str) -> dict[str, Any]:
    """The workers' heartbeat keys (`<prefix>warplab:worker:<name>`), parsed when they hold JSON."""
    found: dict[str, Any] = {}
    for key in client.scan_iter(match=f"{prefix}warplab:worker:*", count=100):
        kind = client.type(key)
        raw = client.get(key) if kind == b"string" else client.hgetall(key) if kind == b"hash" else None
        if isinstance(raw, bytes):
            with contextlib.suppress(ValueError):
                raw = json.loads(raw)
        elif isinstance(raw, dict):
            raw = {k.decode(): v.decode(errors="replace") for k, v in raw.items()}
        found[key.decode()] = raw
    return found


def wait_worker_ready(worker: Service, client: Any, prefix: str, timeout: float) -> dict[str, Any]:
    """Time the cold start: Celery's ` ready.` line, and the heartbeat's first sight and each new state."""
    deadline = time.monotonic() + timeout
    ready: dict[str, Any] = {"log_ready_s": None, "heartbeat_first_s": None, "heartbeat_states": []}
    last_state = None
    while time.monotonic() < deadline:
        now = time.monotonic() - worker.spawned
        if ready["log_ready_s"] is None and worker.saw(" ready."):
            ready["log_ready_s"] = round(now, 3)
        beats = _heartbeats(client, prefix)
        if beats:
            ready["heartbeat_first_s"] = ready["heartbeat_first_s"] or round(now, 3)
            beat = next(iter(beats.values()))
            state = beat.get("state") if isinstance(beat, dict) else None
            if state != last_state:
                ready["heartbeat_states"].append({"at_s": round(now, 3), "state": state})
                last_state = state
            ready["heartbeat"] = beat
        if ready["log_ready_s"] is not None and (not beats or str(last_state).lower() not in NOT_READY):
            return ready
        if ready["log_ready_s"] is not None and now - ready["log_ready_s"] > 30:
            return ready  # a heartbeat that never says ready does not hold the bench up
        worker.check_alive()
        time.sleep(0.01)
    raise RuntimeError(f"{worker.name}: not ready after {timeout:.0f} s:\n{worker.log_path.read_text()[-3000:]}")


# --- jobs, in this process, with Django set up --------------------------------------------------


async def run_one(user: Any, language: str, source: str, timeout: float) -> dict[str, Any]:
    """Submit one job as the website does and time its events as a WebSocket viewer would get them."""
    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer

    from labs.models import Submission
    from labs.runs import services

    layer = get_channel_layer()
    channel = await layer.new_channel()
    t0, wall0 = time.monotonic(), time.time()
    submission = await sync_to_async(services.submit_run)(user, EXERCISE, language, source)
    group = submission.group_name
    # submit_run returns once the job is sent; the worker's first event needs a broker round trip and two
    # task hops, so joining now misses nothing but `queued` (checked below against the stored events)
    await layer.group_add(group, channel)
    stored = await sync_to_async(lambda: list(submission.events.values_list("type", flat=True)))()
    record: dict[str, Any] = {
        "submission": submission.pk,
        "language": language,
        "submit_call_s": round(time.monotonic() - t0, 4),
        "joined_late": [t for t in stored if t != "queued"],
        "first": {},
        "events": [],
        "hop_s": [],
    }
    try:
        while True:
            remaining = t0 + timeout - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            message = await asyncio.wait_for(layer.receive(channel), timeout=remaining)
            event = message.get("event") or {}
            now = time.monotonic() - t0
            kind = event.get("type", "?")
            record["events"].append([round(now, 4), kind, event.get("seq")])
            record["first"].setdefault(kind, round(now, 4))
            if isinstance(event.get("at"), (int, float)):  # worker's clock -> our receipt: the trip back
                record["hop_s"].append(round(time.time() - event["at"], 4))
            if kind == "started":
                record["device"], record["backend"] = event.get("device"), event.get("backend")
                record["pickup_s"] = round(event["at"] - wall0, 4) if "at" in event else None
                if isinstance(event.get("received_at"), (int, float)):  # a worker took it; then its claim
                    record["queue_s"] = round(event["received_at"] - wall0, 4)
                    record["claim_s"] = event.get("claim_seconds")
            if kind in FINAL:
                record["verdict"], record["message"] = event.get("verdict", kind), event.get("message", "")
                break
    except TimeoutError:
        record["verdict"], record["message"] = "lost", f"no final event within {timeout:.0f} s"
    finally:
        await layer.group_discard(group, channel)
    done = await sync_to_async(Submission.objects.get)(pk=submission.pk)
    result = done.result or {}
    record["status"] = done.status
    record["elapsed_s"] = result.get("elapsed_seconds")
    record["warm_start"] = bool((result.get("sandbox") or {}).get("warm_start"))
    sandbox = result.get("sandbox") or {}
    # its cgroup's count, or its processes' at the final message (`isolation.tree_cpu`); a spare's warm-up included
    record["sandbox_cpu_s"] = sandbox.get("cpu_seconds")
    record["sandbox_cpu_counted_by"] = sandbox.get("cpu_counted_by")
    record["warm_up_cpu_s"] = sandbox.get("warm_up_cpu_seconds")  # the spare's whole tree at the hand-over
    record["warm_up_steps_cpu_s"] = steps = dict(sandbox.get("warm_up_steps_cpu_s") or {})  # the spare's own, by step
    if OUTSIDE_STEP in steps and record["warm_up_cpu_s"] is not None:  # the steps are its whole process's count
        steps[OTHER_PROCESSES] = round(max(0.0, record["warm_up_cpu_s"] - sum(steps.values())), 4)
    record["figures"] = len(result.get("figures") or [])
    sizes = (result.get("timing") or {}).get("sizes") or []
    record["timed_sizes"] = [  # where the job's timing went, size by size (the measuring process's clock)
        {
            k: size.get(k)
            for k in (
                "lock_wait_seconds",
                "lock_held_seconds",
                "launches_held_seconds",
                "sharing_wait_seconds",
                "repeats",
                "stop_reason",
                "gpu_seconds",
                "host_phases_s",
                "hold_phases_s",
                "hot_graph_captured",
            )
        }
        for size in sizes
    ]
    first = record["first"]
    if "started" in first and "figure" in first:
        record["started_to_figure_s"] = round(first["figure"] - first["started"], 4)
    return record


def _make_student(username: str = "alice") -> Any:
    from django.contrib.auth.models import User

    from labs import accounts

    groups = accounts.ensure_roles()
    user, _ = User.objects.get_or_create(username=username)
    user.groups.add(groups[accounts.STUDENTS])
    return user


async def run_jobs(
    languages: list[str], rounds: int, timeout: float, deadline: float, first_after: float = 0.0, think: float = 0.0
) -> dict[str, Any]:
    from asgiref.sync import sync_to_async

    from gpu_worker.exercise.labspec import find_lab

    sources = {case.language: case.source for case in find_lab(EXERCISE).cases if case.name.startswith("reference")}
    user = await sync_to_async(_make_student)()
    await asyncio.sleep(first_after)  # a learner rarely submits the instant a worker is ready
    cold = await run_one(user, languages[0], sources[languages[0]], timeout)
    print(f"cold job: {_line(cold)}", flush=True)
    jobs: list[dict[str, Any]] = []
    stopped = ""
    for r in range(rounds):
        for language in languages:
            if time.monotonic() > deadline:
                stopped = f"stopped after {len(jobs)} jobs: the --deadline was reached"
                break
            await asyncio.sleep(think)  # a learner reads the last verdict before submitting again
            job = await run_one(user, language, sources[language], timeout)
            job["round"] = r
            jobs.append(job)
            print(f"round {r} {_line(job)}", flush=True)
            if job["verdict"] == "lost":
                stopped = "stopped: a job was lost"
                break
        if stopped:
            break
    return {"cold_job": cold, "jobs": jobs, "stopped": stopped}


async def run_concurrent(
    languages: list[str], learners: int, timeout: float, seconds: float, unique: bool = False
) -> dict[str, Any]:
    """`learners` students at once, each submitting the reference again as soon as their last run is done;
    `unique`: each submission's source differs by a comment, so none is served by the compile cache."""
    from asgiref.sync import sync_to_async

    from gpu_worker.exercise.labspec import find_lab

    sources = {case.language: case.source for case in find_lab(EXERCISE).cases if case.name.startswith("reference")}
    users = [await sync_to_async(_make_student)(f"learner{i}") for i in range(learners)]
    jobs: list[dict[str, Any]] = []
    t0 = time.monotonic()
    end = t0 + seconds

    async def learner(index: int) -> None:
        turn = index
        while time.monotonic() < end:
            language = languages[turn % len(languages)]
            turn += 1
            source = sources[language] + (f"\n// {index}-{turn}\n" if unique and language == "cuda" else "")
            source += f"\n# {index}-{turn}\n" if unique and language != "cuda" else ""
            job = await run_one(users[index], language, source, timeout)
            job["learner"] = index
            jobs.append(job)
            if job["verdict"] == "lost":
                return

    await asyncio.gather(*(learner(i) for i in range(learners)))
    wall = time.monotonic() - t0
    accepted = sum(j["verdict"] == "accepted" for j in jobs)
    done = [j["first"]["done"] for j in jobs if "done" in j["first"]]
    figure = [j["first"]["figure"] for j in jobs if "figure" in j["first"]]
    return {
        "learners": learners,
        "wall_s": round(wall, 2),
        "jobs": jobs,
        "accepted": accepted,
        "jobs_per_hour": round(accepted / wall * 3600.0, 1),
        "verdict_s": _stats(done),
        "first_figure_s": _stats(figure),
        "where_the_time_went": _where_the_time_went(jobs),
        "targets_met": {
            "≥ 10000 graded jobs per hour": accepted / wall * 3600.0 >= 10000,
            "verdict p95 ≤ 2 s": bool(done) and (_stats(done) or {}).get("p95", 99) <= 2.0,
            "first figure p50 ≤ 0.5 s": bool(figure) and statistics.median(figure) <= 0.5,
        },
    }


def _where_the_time_went(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """Under load, per job: waiting for a worker, running, the timing lock (waited for, held), the checks' wait
    behind other jobs' timings, and the samples each size took: what a slow verdict was made of."""

    def between(a: str, b: str) -> list[float]:
        return [j["first"][b] - j["first"][a] for j in jobs if a in j["first"] and b in j["first"]]

    sizes = [s for j in jobs for s in j.get("timed_sizes") or []]
    timed = [j["timed_sizes"] for j in jobs if j.get("timed_sizes")]
    return {
        "submit_to_started_s": _stats([j["first"]["started"] for j in jobs if "started" in j["first"]]),
        # the same split at the worker's clock: submit -> the worker's `started` (the queue and the claim), and
        # every event's hop from the worker to this listener (the web queue's relay, the channel layer)
        "submit_to_worker_started_s": _stats([j["pickup_s"] for j in jobs if j.get("pickup_s") is not None]),
        # of which: the wait for a worker (submit -> a worker took the delivery) and the claim's round trip
        "submit_to_worker_took_it_s": _stats([j["queue_s"] for j in jobs if j.get("queue_s") is not None]),
        "claim_round_trip_s": _stats([j["claim_s"] for j in jobs if j.get("claim_s") is not None]),
        "event_hop_s": _stats([h for j in jobs for h in j.get("hop_s") or []]),
        "started_to_done_s": _stats(between("started", "done")),
        "lock_wait_per_job_s": _stats([sum(s["lock_wait_seconds"] or 0 for s in t) for t in timed]),
        "lock_held_per_job_s": _stats([sum(s["lock_held_seconds"] or 0 for s in t) for t in timed]),
        # of that hold, the launches themselves (warm-up to last sample): the rest is the harness's host calls
        "launches_held_per_job_s": _stats([sum(s.get("launches_held_seconds") or 0 for s in t) for t in timed]),
        # the checks' shared lock, held back by other jobs' timings (a running total: the last size's is the job's)
        "checks_wait_per_job_s": _stats([t[-1].get("sharing_wait_seconds") or 0 for t in timed]),
        "gpu_per_job_s": _stats([sum(s["gpu_seconds"] or 0 for s in t) for t in timed]),
        # the CPU a job's sandbox used, its spare's warm-up and compile process included (where cgroups count it)
        "sandbox_cpu_per_job_s": _stats([j["sandbox_cpu_s"] for j in jobs if j.get("sandbox_cpu_s") is not None]),
        "sandbox_cpu_counted_by": sorted({j.get("sandbox_cpu_counted_by") or "" for j in jobs} - {""}),
        "warm_up_cpu_per_job_s": _stats([j["warm_up_cpu_s"] for j in jobs if j.get("warm_up_cpu_s") is not None]),
        "warm_up_steps_cpu_per_job_s": {
            step: _stats([j["warm_up_steps_cpu_s"].get(step, 0.0) for j in jobs if j.get("warm_up_steps_cpu_s")])
            for step in sorted({k for j in jobs for k in (j.get("warm_up_steps_cpu_s") or {})})
        },
        "samples_per_size": _stats([s["repeats"] for s in sizes if s.get("repeats")]),
        "stop_reasons": dict(collections.Counter(s.get("stop_reason") for s in sizes)),
        # the job's stretches as its viewer saw them: compile, the checks, the timings, the verdict's tail
        "started_to_compiled_s": _stats(between("started", "compiled")),
        "compiled_to_first_check_s": _stats(between("compiled", "check")),
        "first_check_to_first_timing_s": _stats(between("check", "timing")),
        "first_timing_to_done_s": _stats(between("timing", "done")),
        # the measuring process's own clock, summed over a job's sizes, phase by phase
        "child_phases_per_job_s": {
            phase: _stats([sum((s.get("host_phases_s") or {}).get(phase, 0.0) for s in t) for t in timed])
            for phase in sorted({k for s in sizes for k in (s.get("host_phases_s") or {})})
        },
        # size by size (the job's first size pays the process's first uses): the correctness work's hold of the
        # lock's shared kind (its phases before the timing) and the timing's exclusive hold
        "shared_hold_by_size_s": _by_size(
            timed, lambda size: sum(v for k, v in (size.get("host_phases_s") or {}).items() if k in SHARED_PHASES)
        ),
        "lock_held_by_size_s": _by_size(timed, lambda size: size["lock_held_seconds"] or 0),
        # inside each size's exclusive hold, the host's seconds step by step (`timing._HostClock`): the
        # enqueueing, the waits on the GPU, the stopping rule, the graph's capture
        "hold_phases_by_size_s": [
            {
                phase: _stats([(t[i].get("hold_phases_s") or {}).get(phase, 0.0) for t in timed])
                for phase in sorted({k for t in timed for k in (t[i].get("hold_phases_s") or {})})
            }
            for i in range(min((len(t) for t in timed), default=0))
        ],
    }


def _by_size(timed: list[list[dict[str, Any]]], value: Any) -> list[dict[str, float] | None]:
    """`value` of each job's i-th timed size, summarised for every index all jobs reached."""
    return [_stats([value(t[i]) for t in timed]) for i in range(min((len(t) for t in timed), default=0))]


# the phases a size spends under the GPU lock's shared kind (`isolation.child._Child._judge`): its correctness
# work before the timings, and the read-back and comparisons of what its timed launches left after them
SHARED_PHASES = ("inputs", "launch_and_check", "occupancy", "timed_inputs", "timed_checks")


def _own_cpu() -> float:
    """This process's own CPU seconds (not its services': they are its children)."""
    times = os.times()
    return times.user + times.system


def _gpu_busy(client: Any, prefix: str, ready: dict[str, Any]) -> dict[str, float] | None:
    """The GPU's timing-lock duty cycle over the load's last whole minute (`gpu_worker.measurement.gpu_busy`),
    every worker of it together; None off a GPU (the heartbeat names no GPU)."""
    from gpu_worker.measurement import gpu_busy

    uuid = (ready.get("heartbeat") or {}).get("gpu_uuid")
    return gpu_busy.duty_cycle(client, prefix, uuid) if uuid else None


def _expected(backend: str, language: str) -> str:
    """The reference's verdict: CUDA C++ on the simulator is compiled and analysed, not run."""
    return "not_run" if backend == "sim" and language == "cuda" else "accepted"


def _line(job: dict[str, Any]) -> str:
    first = {k: job["first"].get(k, float("nan")) for k in ("started", "figure")}
    final = job["first"].get("done", job["first"].get("error", float("nan")))
    line = (
        f"{job['language']:5} #{job['submission']}: {job['verdict']}; started {first['started']:.3f} s, "
        f"first figure {first['figure']:.3f} s, final event {final:.3f} s"
    )
    return line if job["verdict"] in ("accepted", "not_run") else f"{line}: {job.get('message', '')[:500]}"


# --- report ----------------------------------------------------------------------------------


def _stats(values: list[float]) -> dict[str, float] | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    p95 = statistics.quantiles(values, n=100, method="inclusive")[94] if len(values) > 1 else values[0]
    return {"n": len(values), "p50": statistics.median(values), "p95": p95, "max": max(values)}


METRICS = (
    ("submit → started", lambda j: j["first"].get("started")),
    ("submit → compiled (registers)", lambda j: j["first"].get("compiled")),
    ("submit → occupancy figure", lambda j: j["first"].get("figure")),
    ("submit → first figure, excluding queue wait (from started)", lambda j: j.get("started_to_figure_s")),
    ("submit → first check", lambda j: j["first"].get("check")),
    ("submit → done", lambda j: j["first"].get("done")),
    ("worker event → received here (each event)", None),
)


def summarise(run: dict[str, Any], languages: list[str]) -> dict[str, Any]:
    table: dict[str, dict[str, Any]] = {}
    for language in [*languages, "all"]:
        jobs = [j for j in run["jobs"] if language in ("all", j["language"])]
        table[language] = {}
        for name, pick in METRICS:
            values = [h for j in jobs for h in j["hop_s"]] if pick is None else [pick(j) for j in jobs]
            table[language][name] = _stats(values)
    warm = table["all"][METRICS[3][0]] or {}
    raw = table["all"][METRICS[2][0]] or {}
    done = table["all"]["submit → done"] or {}
    return {
        "table": table,
        "targets_met": {
            "occupancy figure p50 ≤ 0.6 s (CPU tier, issue 12)": bool(raw) and raw["p50"] <= TARGETS["static_p50"],
            "verdict p50 ≤ 1.5 s (CPU tier, issue 12)": bool(done) and done["p50"] <= TARGETS["verdict_p50"],
            "p50 ≤ 1.5 s (excluding queue wait)": bool(warm) and warm["p50"] <= TARGETS["p50"],
            "p95 ≤ 4 s (excluding queue wait)": bool(warm) and warm["p95"] <= TARGETS["p95"],
            "p50 ≤ 1.5 s (raw)": bool(raw) and raw["p50"] <= TARGETS["p50"],
            "p95 ≤ 4 s (raw)": bool(raw) and raw["p95"] <= TARGETS["p95"],
        },
    }


def merge_logs(out: Path, services: list[Service]) -> None:
    """One `services.log` instead of a file per service: the device tool brings back at most 8 files."""
    with (out / "services.log").open("w") as merged:
        for service in services:
            merged.write(f"===== {service.name} ({service.log_path.name}) =====\n")
            merged.write(service.log_path.read_text(errors="replace"))
            service.log_path.unlink()


def write_report(out: Path, report: dict[str, Any]) -> str:
    languages = report["languages"]
    ready = report.get("worker_ready") or {}
    lines = [
        f"# Pipeline bench: {report['backend']} backend, {report.get('device', '?')}",
        "",
        f"{report['started_at']}; {report['rounds']} rounds × {', '.join(languages)}, one job at a time, "
        f"{report.get('think_s', 0)} s between a verdict and the next submit; "
        f"spare sandboxes: {report['spare']}; host {report['host']}, {os.cpu_count()} CPUs, load average "
        f"{report.get('load_before')} before, {report.get('load_after')} after.",
        "",
        "| cold worker | seconds |",
        "| --- | --- |",
        f"| spawn → Celery ` ready.` | {ready.get('log_ready_s')} |",
        f"| spawn → first heartbeat | {ready.get('heartbeat_first_s')} |",
        f"| heartbeat states | {ready.get('heartbeat_states') or 'no heartbeat key'} |",
        f"| target ≤ {TARGETS['cold_ready']:g} s met | {report.get('cold_ready_met')} |",
    ]
    cold = report.get("cold_job")
    if cold:
        first = cold["first"]
        lines += [
            "",
            f"First job on the cold worker ({cold['language']}, sent {report.get('first_after_s', 0)} s after it was "
            f"ready): {cold['verdict']}; started {first.get('started')} s, "
            f"first figure {first.get('figure')} s, done {first.get('done')} s after the submit; "
            f"warm start: {cold['warm_start']}.",
        ]
    summary = report.get("summary")
    if summary:
        lines += ["", "| metric (s) | language | n | p50 | p95 | max |", "| --- | --- | --- | --- | --- | --- |"]
        for language, metrics in summary["table"].items():
            for name, s in metrics.items():
                if s:
                    lines.append(
                        f"| {name} | {language} | {s['n']} | {s['p50']:.3f} | {s['p95']:.3f} | {s['max']:.3f} |"
                    )
        lines += ["", "| target | met |", "| --- | --- |"]
        lines += [f"| {name} | {met} |" for name, met in summary["targets_met"].items()]
    load = report.get("load")
    if load:
        lines += [
            "",
            f"Load: {load['learners']} learners at once on {load['workers']} worker(s) for {load['wall_s']} s"
            f"{' (every source unique: no compile-cache hits)' if load.get('unique_sources') else ''}: "
            f"{load['accepted']} accepted, **{load['jobs_per_hour']} graded jobs per hour**; verdict (submit → done) "
            f"{load['verdict_s']}; first figure {load['first_figure_s']}; the GPU's timing lock over the last "
            f"whole minute: {load.get('gpu_busy')}.",
            "",
            "| load target | met |",
            "| --- | --- |",
            *[f"| {name} | {met} |" for name, met in load["targets_met"].items()],
        ]
        if load.get("host_cpu"):
            lines += [
                "",
                "| the host's CPU during the load | CPU s | cores | per graded job (s) |",
                "| --- | --- | --- | --- |",
            ]
            lines += [
                f"| {name} | {row['cpu_s']} | {row['cores']} | {row['per_job_s']} |"
                for name, row in load["host_cpu"].items()
            ]
        went = load.get("where_the_time_went") or {}
        if went.get("sandbox_cpu_per_job_s"):
            steps = ", ".join(f"{k} {(v or {}).get('p50')}" for k, v in went["warm_up_steps_cpu_per_job_s"].items())
            lines += [
                "",
                f"A job's sandbox CPU seconds ({', '.join(went['sandbox_cpu_counted_by'])}): "
                f"{went['sandbox_cpu_per_job_s']}; of them its spare's warm-up, at the hand-over: "
                f"{went['warm_up_cpu_per_job_s']}; the spare's own count by step, p50: {steps or 'none'}.",
            ]
    bad = report.get("not_accepted") or []
    lines += ["", f"Verdicts: {report.get('accepted', 0)} of {report.get('job_count', 0)} accepted."]
    lines += [f"- #{j['submission']} {j['language']}: {j['verdict']}: {j['message'][:300]}" for j in bad]
    if report.get("stopped"):
        lines.append(f"- {report['stopped']}")
    if report.get("error"):
        lines += ["", f"**Failed:** {report['error']}"]
    text = "\n".join(lines) + "\n"
    (out / "pipeline.md").write_text(text)
    (out / "pipeline.json").write_text(json.dumps(report, indent=1, default=str))
    return text


# --- main ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("cuda", "sim"), default="cuda")
    parser.add_argument("--pool", default="h200.full", help="the GPU worker's pool (cuda backend)")
    parser.add_argument("--languages", default="", help="e.g. numba,cuda (default: cuda,numba on a GPU, numba on sim)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", type=Path, default=ROOT / ".run" / "pipeline")
    parser.add_argument("--redis-url", default=None, help="use this Redis instead of starting one")
    parser.add_argument("--redis-port", type=int, default=6390)
    parser.add_argument("--spare", choices=("auto", "0", "1"), default="auto", help="WARPLAB_SPARE_SANDBOX")
    parser.add_argument("--job-timeout", type=float, default=120.0)
    parser.add_argument("--first-after", type=float, default=0.0, help="seconds between ready and the first job")
    parser.add_argument("--think", type=float, default=0.0, help="seconds between a verdict and the next submit")
    parser.add_argument("--ready-timeout", type=float, default=120.0)
    parser.add_argument(
        "--web-concurrency", type=int, default=2, help="processes of the web-queue worker (docker-compose.yml: 2)"
    )
    parser.add_argument("--deadline", type=float, default=210.0, help="no new job after this many seconds")
    parser.add_argument("--workers", type=int, default=1, help="execution workers on the same GPU (same queue)")
    parser.add_argument("--learners", type=int, default=0, help="then this many students at once (0: none)")
    parser.add_argument("--load-seconds", type=float, default=60.0, help="how long the learners submit")
    parser.add_argument(
        "--unique-sources",
        action="store_true",
        help="each load submission a source of its own (a numbered comment): no job is served by the compile cache",
    )
    parser.add_argument(
        "--checks-beside-timings",
        action="store_true",
        help="correctness work takes no GPU lock and runs inside other jobs' timings (before the shared lock)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="warplab-pipeline-"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` stops every service
    languages = (
        args.languages.split(",") if args.languages else ["cuda", "numba"] if args.backend == "cuda" else ["numba"]
    )
    queue = f"gpu.{args.pool}" if args.backend == "cuda" else "sim"
    prefix = f"bench{os.getpid()}:"
    report: dict[str, Any] = {
        "backend": args.backend,
        "queue": queue,
        "languages": languages,
        "rounds": args.rounds,
        "spare": "worker default" if args.spare == "auto" else args.spare,
        "web_concurrency": args.web_concurrency,
        "checks_beside_timings": args.checks_beside_timings,
        "checks_alone": gpu_lock.checks_alone(),  # WARPLAB_CHECKS_ALONE, set by the caller
        "first_after_s": args.first_after,
        "think_s": args.think,
        "load_before": os.getloadavg(),
        "host": os.uname().nodename,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": sys.version.split()[0],
    }
    services: list[Service] = []
    worker_env = dict(os.environ)  # before the web's variables: the worker gets no database or secret key
    if args.checks_beside_timings:
        worker_env[gpu_lock.CHECKS_BESIDE_TIMINGS_ENV] = "1"
    code = 1
    try:
        redis_url = args.redis_url
        if redis_url is None:
            redis_service, redis_url = start_redis(args.redis_port, args.out)
            services.append(redis_service)
        web_env = {
            "DJANGO_SETTINGS_MODULE": "labsite.settings",
            "DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}",
            "SECRET_KEY": os.urandom(24).hex(),
            "REDIS_URL": redis_url,
            "CELERY_BROKER_URL": redis_url,
            "CHANNELS_PREFIX": f"bench{os.getpid()}",
            "WARPLAB_BROKER_PREFIX": prefix,
            "WARPLAB_DEFAULT_QUEUE": queue,
            "WARPLAB_RUNS_PER_MINUTE": "100000",
            "WARPLAB_SQLITE_WAL": "1",  # SQLite stands in for PostgreSQL here: readers never wait for a writer
            "PYTHONUNBUFFERED": "1",
        }
        os.environ.update(web_env)
        import django
        import redis
        from django.core.management import call_command

        t = time.monotonic()
        django.setup()
        call_command("migrate", verbosity=0, interactive=False)
        call_command("sync_labs")
        report["setup_db_s"] = round(time.monotonic() - t, 2)

        web_argv = [sys.executable, "-m", "celery", "-A", "labsite", "worker", "-Q", "web"]
        # as docker-compose.yml runs it (two processes store reports side by side); 1 is `./lab up`'s solo worker
        web_argv += ["-P", "solo"] if args.web_concurrency == 1 else ["--concurrency", str(args.web_concurrency)]
        web_argv += ["-n", f"web-bench{os.getpid()}@%h", "--without-gossip", "--without-mingle", "--loglevel", "INFO"]
        web = Service("worker-web", web_argv, dict(os.environ), args.out / "worker-web.log")
        services.append(web)
        report["web_worker_ready_s"] = round(web.wait_for(" ready.", args.ready_timeout), 3)

        worker_env.update(
            WARPLAB_BROKER_URL=redis_url,
            WARPLAB_BROKER_PREFIX=prefix,
            WARPLAB_BACKEND=args.backend,
            WARPLAB_POOL=args.pool if args.backend == "cuda" else "sim",
            PYTHONUNBUFFERED="1",
        )
        if args.spare != "auto":
            worker_env["WARPLAB_SPARE_SANDBOX"] = args.spare
        pool = args.pool if args.backend == "cuda" else "sim"
        worker_argv = [sys.executable, "-m", "gpu_worker", "serve", "--pool", pool]
        worker = Service(f"worker-{args.backend}", worker_argv, worker_env, args.out / f"worker-{args.backend}.log")
        services.append(worker)
        client = redis.Redis.from_url(redis_url)
        ready = wait_worker_ready(worker, client, prefix, args.ready_timeout)
        extras = []
        for k in range(1, args.workers):  # more workers on the same GPU: checks overlap, timed runs take the lock
            env = {**worker_env, "WARPLAB_WORKER_NAME": f"{pool}-{k}@{os.uname().nodename}"}
            extra = Service(f"worker-{args.backend}-{k}", worker_argv, env, args.out / f"worker-{args.backend}-{k}.log")
            services.append(extra)
            extras.append(extra)
        for extra in extras:  # started together, waited for in turn: the device's time is not spent in a row
            wait_worker_ready(extra, client, prefix, args.ready_timeout)
        report["worker_ready"] = ready
        report["cold_ready_met"] = ready["log_ready_s"] <= TARGETS["cold_ready"]
        print(f"{worker.name} ready in {ready['log_ready_s']} s (heartbeat: {ready['heartbeat_states']})", flush=True)

        deadline = time.monotonic() + args.deadline  # from the fleet's being ready: 8 workers take a while to start
        run = asyncio.run(run_jobs(languages, args.rounds, args.job_timeout, deadline, args.first_after, args.think))
        report |= run
        everything = [run["cold_job"], *run["jobs"]]
        report["device"] = next((j.get("device") for j in everything if j.get("device")), None)
        report["job_count"] = len(everything)
        report["accepted"] = sum(j["verdict"] == _expected(args.backend, j["language"]) for j in everything)
        report["not_accepted"] = [j for j in everything if j["verdict"] != _expected(args.backend, j["language"])]
        report["joined_late"] = [j["submission"] for j in everything if j["joined_late"]]
        report["summary"] = summarise(run, languages)
        if args.learners:
            roots = {service.name: service.process.pid for service in services}
            cpu_before, busy_before, bench_before = host_cpu.snapshot(roots), host_cpu.machine_busy_s(), _own_cpu()
            load = asyncio.run(
                run_concurrent(languages, args.learners, args.job_timeout, args.load_seconds, args.unique_sources)
            )
            load["host_cpu"] = host_cpu.between(
                cpu_before,
                host_cpu.snapshot(roots),
                host_cpu.machine_busy_s() - busy_before,
                load["wall_s"],
                load["accepted"],
                {"this bench (the website's submit calls, the learners' sockets)": _own_cpu() - bench_before},
            )
            load["workers"] = args.workers
            load["unique_sources"] = args.unique_sources
            load["gpu_busy"] = _gpu_busy(client, prefix, ready)
            load["targets_met"]["timing lock held ≥ 50% of the wall time"] = (load["gpu_busy"] or {}).get(
                "lock_held_per_wall", 0.0
            ) >= 0.5
            report["load"] = {k: v for k, v in load.items() if k != "jobs"}
            report["load_not_accepted"] = [j for j in load["jobs"] if j["verdict"] != "accepted"][:10]
            print(f"load: {json.dumps(report['load'], default=str)}", flush=True)
        code = 0 if not report["not_accepted"] and not run["stopped"] else 1
    except Exception as exc:  # the report says what failed; the services are stopped below either way
        report["error"] = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        for service in reversed(services):
            service.stop()
        merge_logs(args.out, services)
        shutil.rmtree(work, ignore_errors=True)
        report["total_s"] = round(time.monotonic() - started, 1)
        report["load_after"] = os.getloadavg()
        print(write_report(args.out, report), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
