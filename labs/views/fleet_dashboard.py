"""The fleet dashboard, for admins: the plan against what is live, queue by queue, and each course's GPU time spent
against its budgets, refreshed every 10 s.

Nodes, GPUs and slices come from the plan; each planned worker is matched to its heartbeat by name,
so a slice whose worker is silent, a worker beating for a slice the plan no longer has, a pool with
runs waiting and no live worker, and a GPU model the planner does not know are each said in words.
"""

from __future__ import annotations

import redis
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from labs.fleet import budgets, heartbeats
from labs.fleet.mig_profiles import model_for
from labs.fleet.stats import job_time, queue_stats
from labs.models import Gpu, Pool, Submission, Worker
from labs.models.run import Status
from labs.views.fleet_plan import require_fleet_admin

GPU_STATE_FIELDS = (
    ("utilisation_percent", "util", "%"),
    ("memory_used_mib", "memory used", "MiB"),
    ("temperature_c", "temperature", "°C"),
    ("sm_clock_mhz", "SM clock", "MHz"),
    ("mem_clock_mhz", "memory clock", "MHz"),
)


def _gpu_state_words(beat: dict) -> list[str]:
    state = beat.get("gpu_state") or {}
    if state.get("problem"):
        return [str(state["problem"])]
    if state and not state.get("nvml"):
        return ["NVML not available to this worker: no GPU state"]
    words = [f"{label} {state[key]} {unit}" for key, label, unit in GPU_STATE_FIELDS if state.get(key) is not None]
    busy = beat.get("gpu_busy") or {}
    if busy.get("lock_held_per_wall") is not None:  # what only the GPU can do, every worker of it together
        words.append(f"timed runs held it {100 * float(busy['lock_held_per_wall']):.0f}% of the last minute")
    if state.get("throttle_reasons"):
        words.append("clock held down by " + ", ".join(state["throttle_reasons"]))
    if state.get("mig_mode") is not None:
        words.append("MIG on" if state["mig_mode"] else "MIG off")
    mps = state.get("mps") or {}
    if mps.get("client"):
        words.append(
            f"MPS client ({mps.get('active_thread_percentage') or 'no'}% threads, daemon "
            f"{'reachable' if mps.get('daemon_reachable') else 'NOT reachable'})"
        )
    return words


def _problems(beats: dict[str, dict], planned: set[str], stats: dict, live_by_queue: dict[str, int]) -> list[str]:
    problems = []
    for name, beat in sorted(beats.items()):
        if name in planned or beat.get("backend") == "sim" or not str(beat.get("queue", "")).startswith("gpu."):
            continue
        problems.append(
            f"Worker {name} beats on {beat.get('queue')} but the plan has no such worker: its slice was removed "
            "or renamed. Stop it, or lay the slice out again."
        )
    for queue, entry in sorted(stats.items()):
        waiting = entry["queued"]
        if waiting and not live_by_queue.get(queue):
            problems.append(f"{waiting} run(s) wait on {queue} and no live worker serves it; learners are told so.")
    for gpu in Gpu.objects.select_related("node"):
        if model_for(gpu.model) is None:
            problems.append(f"GPU {gpu.index} of {gpu.node.name} is a model the planner does not know ({gpu.model}).")
    return problems


@login_required
def dashboard_page(request: HttpRequest) -> HttpResponse:
    require_fleet_admin(request)
    error = ""
    try:
        beats = {str(b.get("name")): b for b in heartbeats.live_beats()}
    except redis.RedisError as exc:
        beats, error = {}, f"The broker's Redis did not answer, so what is live is unknown: {exc}"
    pools = list(Pool.objects.all())
    queues = [p.queue for p in pools] + sorted({str(b.get("queue")) for b in beats.values()} - {p.queue for p in pools})
    try:
        lengths = heartbeats.queue_lengths(queues) if not error else {}
    except redis.RedisError as exc:
        lengths, error = {}, f"The broker's Redis did not answer: {exc}"
    stats = queue_stats(queues)
    live_by_queue: dict[str, int] = {}
    for b in beats.values():
        if b.get("state") == "serving":
            live_by_queue[str(b.get("queue"))] = live_by_queue.get(str(b.get("queue")), 0) + 1
    workers = list(Worker.objects.select_related("slice__gpu__node", "slice__pool"))
    planned = {w.name for w in workers}
    rows = []
    for w in workers:
        beat = beats.get(w.name)
        rows.append(
            {
                "worker": w,
                "beat": beat,
                "state": str(beat.get("state", "")).replace("_", " ") if beat else "silent: no heartbeat",
                "gpu_state": _gpu_state_words(beat) if beat else [],
                "problems": (beat or {}).get("problems") or [],
            }
        )
    queue_rows = [
        {
            "queue": q,
            "pool": next((p for p in pools if p.queue == q), None),
            "broker_length": lengths.get(q),
            "live": live_by_queue.get(q, 0),
            **stats[q],
            "job_time": job_time(q),
        }
        for q in queues
    ]
    now = timezone.now()
    running = [
        {"submission": s, "for_seconds": (now - (s.started_at or s.created_at)).total_seconds()}
        for s in Submission.objects.filter(status=Status.RUNNING).select_related("owner", "exercise")[:100]
    ]
    context = {
        "error": error,
        "rows": rows,
        "queues": queue_rows,
        "running": running,
        "problems": _problems(beats, planned, stats, live_by_queue),
        "done_last_hour": sum(q["done_last_hour"] for q in queue_rows),
        "course_spend": budgets.course_spend(),
    }
    return render(request, "labs/fleet_dashboard.html", context)
