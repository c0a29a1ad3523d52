"""Load benchmark (not a test): many WebSocket viewers and a steady stream of submissions against a running lab.

    DJANGO_SETTINGS_MODULE=labsite.settings .venv/bin/python bench/load_ws.py --url http://127.0.0.1:8765 \
        --clients 500 --learners 50 --duration 120 --out bench/results/<date>-load-ws.json

It needs the lab's database (it makes its learners and their sessions there directly, so no password is
hashed 50 times) and a running site, web-queue worker and `sim` worker (bench/run_load_ws.sh starts all of
them on loopback). Each learner submits, its `clients/learners` viewers open the run's socket and follow it
to its final event, and the learner submits again (one run in flight, as the lab allows). It reports:

- submit ack: POST /api/submissions until its 201, per submission;
- socket handshake: from opening a viewer's socket until the server accepted it;
- event to client: a viewer's receive time minus the event's own `at` (set where the event was made: the
  worker, or the site for `queued`), per live event per viewer; same machine, same clock;
- errors: any answer other than 201 to a submit, a socket refused or dropped, a message that is not JSON;
- lost: runs whose final event no viewer saw before the end, and events missing from a viewer's seq range.

It stops by itself: no new submission after --duration, then at most --drain seconds for runs in flight.
Loopback only: the URL must be on 127.0.0.1 or localhost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import requests
import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass
class Tally:
    acks: list[float] = field(default_factory=list)
    event_latency: list[float] = field(default_factory=list)
    handshakes: list[float] = field(default_factory=list)
    submitted: int = 0
    finished: int = 0
    refused: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    lost_runs: int = 0
    lost_events: int = 0
    sockets_opened: int = 0
    peak_open: int = 0
    open_now: int = 0


def learners_with_sessions(count: int) -> list[str]:
    """Session keys of `count` bench learners, made in the lab's database (passwords unusable: none is hashed)."""
    import django

    django.setup()
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User

    from labs import accounts

    store = import_module(settings.SESSION_ENGINE).SessionStore
    student = accounts.ensure_roles()[accounts.STUDENTS]
    keys = []
    for i in range(count):
        user, created = User.objects.get_or_create(username=f"bench-learner-{i:03d}")
        if created:
            user.set_unusable_password()
            user.save()
            user.groups.add(student)
        session = store()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.save()
        keys.append(session.session_key)
    return keys


def sources() -> list[tuple[str, str]]:
    from gpu_worker.exercise.labspec import find_lab

    cases = {case.name: case for case in find_lab("vector-add").cases}
    return [("numba", cases["reference-numba"].source), ("numba", cases["syntax-error-numba"].source)]


class Learner:
    """One learner's session: submits, hands each new run to its viewers, waits for its final event."""

    def __init__(self, index: int, session: str, args: argparse.Namespace, tally: Tally, pool: ThreadPoolExecutor):
        self.index, self.args, self.tally, self.pool = index, args, tally, pool
        self.csrf = secrets.token_hex(16)  # the double-submit pair: this cookie and the same header
        self.cookies = {"sessionid": session, "csrftoken": self.csrf}
        self.run_id: int | None = None
        self.new_run = asyncio.Condition()
        self.final = asyncio.Event()
        self.stopping = False

    def _post(self, body: str) -> tuple[int, float, dict]:
        start = time.perf_counter()
        response = requests.post(
            f"{self.args.url}/api/submissions",
            data=body,
            cookies=self.cookies,
            headers={"Content-Type": "application/json", "X-CSRFToken": self.csrf, "Origin": self.args.url},
            timeout=30,
        )
        took = time.perf_counter() - start
        try:
            payload = response.json()
        except ValueError:
            payload = {"error": response.text[:200]}
        return response.status_code, took, payload

    async def run(self, deadline: float, choices: list[tuple[str, str]]) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(self.index * self.args.ramp / max(1, self.args.learners))  # a class arrives over --ramp
        n = 0
        while time.time() < deadline:
            language, source = choices[(self.index + n) % len(choices)]
            n += 1
            body = json.dumps({"exercise": "vector-add", "language": language, "source": source})
            try:
                status, took, payload = await loop.run_in_executor(self.pool, self._post, body)
            except requests.RequestException as exc:
                self.tally.errors.append(f"submit: {exc}")
                await asyncio.sleep(1)
                continue
            if status != 201:
                self.tally.refused[status] = self.tally.refused.get(status, 0) + 1
                if status not in (429, 503):
                    self.tally.errors.append(f"submit {status}: {payload.get('error')}")
                await asyncio.sleep(1)
                continue
            self.tally.acks.append(took)
            self.tally.submitted += 1
            self.final.clear()
            async with self.new_run:
                self.run_id = payload["id"]
                self.new_run.notify_all()
            try:
                await asyncio.wait_for(self.final.wait(), timeout=max(1.0, deadline + self.args.drain - time.time()))
                self.tally.finished += 1
            except TimeoutError:
                self.tally.lost_runs += 1
                break
        self.stopping = True
        async with self.new_run:
            self.new_run.notify_all()


async def viewer(learner: Learner, tally: Tally, args: argparse.Namespace) -> None:
    """Follows each of the learner's runs on its socket, from the snapshot to the final event."""
    seen_run = None
    ws_base = "ws://" + urlsplit(args.url).netloc
    headers = {"Origin": args.url, "Cookie": f"sessionid={learner.cookies['sessionid']}"}
    while True:
        async with learner.new_run:
            await learner.new_run.wait_for(lambda last=seen_run: learner.stopping or learner.run_id != last)
        if learner.stopping and learner.run_id == seen_run:
            return
        seen_run = learner.run_id
        opening = time.perf_counter()
        try:
            async with websockets.connect(
                f"{ws_base}/ws/submissions/{seen_run}/", additional_headers=headers, open_timeout=30, max_size=2**24
            ) as ws:
                tally.handshakes.append(time.perf_counter() - opening)
                tally.sockets_opened += 1
                tally.open_now += 1
                tally.peak_open = max(tally.peak_open, tally.open_now)
                try:
                    await follow(ws, learner, tally, args)
                finally:
                    tally.open_now -= 1
        except (OSError, websockets.WebSocketException, TimeoutError) as exc:
            tally.errors.append(f"socket run {seen_run}: {type(exc).__name__}: {exc}")


async def follow(ws, learner: Learner, tally: Tally, args: argparse.Namespace) -> None:
    seqs: set[int] = set()
    last = None
    while True:
        try:
            raw = await asyncio.wait_for(ws.recv(), timeout=args.duration + args.drain)
        except TimeoutError:
            tally.errors.append("socket: no message before the end")
            return
        received = time.time()
        message = json.loads(raw)
        if message["type"] == "snapshot":
            events = message["submission"]["events"]
        elif message["type"] == "event":
            events = [message["event"]]
            if isinstance(events[0].get("at"), int | float):
                tally.event_latency.append(received - events[0]["at"])
        else:
            tally.errors.append(f"socket: unexpected {message['type']}")
            continue
        for event in events:
            seqs.add(event["seq"])
            if event["type"] in ("done", "error"):
                last = event["seq"]
        if last is not None:
            tally.lost_events += len(set(range(1, last + 1)) - seqs)
            learner.final.set()
            return


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict:
    return {
        "count": len(values),
        "p50_ms": None if not values else round(1000 * statistics.median(values), 1),
        "p95_ms": None if not values else round(1000 * percentile(values, 0.95), 1),
        "p99_ms": None if not values else round(1000 * percentile(values, 0.99), 1),
        "max_ms": None if not values else round(1000 * max(values), 1),
    }


async def main(args: argparse.Namespace, sessions: list[str], choices: list[tuple[str, str]]) -> dict:
    tally = Tally()
    pool = ThreadPoolExecutor(max_workers=args.learners)
    learners = [Learner(i, key, args, tally, pool) for i, key in enumerate(sessions)]
    per = max(1, args.clients // args.learners)
    started = time.time()
    deadline = started + args.duration
    viewers = [asyncio.create_task(viewer(lr, tally, args)) for lr in learners for _ in range(per)]
    await asyncio.sleep(0.5)  # the viewers wait on their learner before its first submit
    await asyncio.gather(*(lr.run(deadline, choices) for lr in learners))
    await asyncio.wait(viewers, timeout=10)
    for task in viewers:
        task.cancel()
    return {
        "bench": "load_ws",
        "url": args.url,
        "clients": per * args.learners,
        "learners": args.learners,
        "duration_s": args.duration,
        "ramp_s": args.ramp,
        "wall_s": round(time.time() - started, 1),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "submit_ack": summary(tally.acks),
        "event_to_client": summary(tally.event_latency),
        "socket_handshake": summary(tally.handshakes),
        "submitted": tally.submitted,
        "finished": tally.finished,
        "refused_by_status": tally.refused,
        "errors": len(tally.errors),
        "error_samples": tally.errors[:10],
        "lost_runs": tally.lost_runs,
        "lost_events": tally.lost_events,
        "sockets_opened": tally.sockets_opened,
        "peak_open_sockets": tally.peak_open,
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8765")
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--learners", type=int, default=50)
    parser.add_argument("--duration", type=float, default=120.0, help="seconds of new submissions")
    parser.add_argument("--drain", type=float, default=90.0, help="seconds allowed after that for runs in flight")
    parser.add_argument("--ramp", type=float, default=10.0, help="seconds over which the learners start")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if urlsplit(args.url).hostname not in ("127.0.0.1", "localhost"):
        parser.error("this benchmark only targets a lab on loopback (127.0.0.1 or localhost)")
    return args


if __name__ == "__main__":
    options = parse()
    made = learners_with_sessions(options.learners)  # the ORM before the event loop: Django is sync here
    report = asyncio.run(main(options, made, sources()))
    text = json.dumps(report, indent=2)
    print(text)
    if options.out:
        options.out.write_text(text + "\n")
