"""Chaos benchmark, full size: 200 runs while the sim worker's main process is killed 20 times and its pool
process 20 times, Redis restarted once (without its data) and PostgreSQL restarted once, mid-run.

Everything runs on private servers it starts and stops itself, never the machine's shared ones: a
redis-server on --redis-port (no persistence, so a restart loses every queued job, the hardest case) and a
PostgreSQL cluster made with initdb in a temporary folder on --pg-port. The site is driven in-process through
Django's test client (POST /api/submissions as 20 learners, GET each run back), the web-queue worker (with
beat: the job ledger's reaper) and the sim worker are real processes (tests/processes.py, tests/chaos.py).

It reports: runs lost, duplicated (more than one final event), left running, wrong verdicts and
infrastructure errors; server errors (HTTP 5xx) after each restart's recovery, and during the outages;
attempts per run; how long a killed process's pool process and sandboxes lived on; wall time.
Usage: .venv/bin/python bench/chaos.py --out bench/results/chaos-YYYY-MM-DD.json [--runs 200 --kills 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG_BIN = Path("/usr/lib/postgresql/15/bin")


@dataclass
class Outage:
    """How to take one private server down and bring it back."""

    stop: Callable[[], None]
    start: Callable[[], None]


@contextlib.contextmanager
def private_redis(port: int, folder: Path) -> Iterator[Outage]:
    """A redis-server of our own on `port`; its restart loses its data (no persistence)."""
    argv = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    argv += ["--dir", str(folder)]
    log = (folder / "redis.log").open("a")
    proc = [subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)]

    def ping() -> bool:
        return subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip() == b"PONG"

    def wait() -> None:
        for _ in range(100):
            if ping():
                return
            time.sleep(0.1)
        raise RuntimeError("the private redis-server did not start")

    def stop() -> None:
        proc[0].kill()
        proc[0].wait()

    def start() -> None:
        proc[0] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        wait()

    wait()
    try:
        yield Outage(stop, start)
    finally:
        proc[0].kill()
        proc[0].wait()


@contextlib.contextmanager
def private_postgres(port: int, folder: Path) -> Iterator[Outage]:
    """A PostgreSQL cluster of our own (initdb) on `port`, run as the postgres user; stopped in immediate mode."""
    data = folder / "pg"
    shutil.chown(folder, "postgres")
    as_pg = ["runuser", "-u", "postgres", "--"]
    initdb = [*as_pg, PG_BIN / "initdb", "-D", data, "-A", "trust", "-U", "postgres"]
    subprocess.run(initdb, check=True, capture_output=True)
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
    ctl = [*as_pg, PG_BIN / "pg_ctl", "-D", data, "-l", folder / "pg.log", "-w", "-o", options]
    subprocess.run([*ctl, "start"], check=True, capture_output=True)

    def stop() -> None:
        subprocess.run([*ctl, "-m", "immediate", "stop"], check=True, capture_output=True)

    def start() -> None:
        subprocess.run([*ctl, "start"], check=True, capture_output=True)

    try:
        psql = ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]
        subprocess.run([*psql, "-qc", "CREATE DATABASE warplab"], check=True)
        yield Outage(stop, start)
    finally:
        subprocess.run([*ctl, "-m", "immediate", "stop"], capture_output=True)


def configure(redis_port: int, pg_port: int) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="labsite.settings",
        SECRET_KEY="bench-chaos-only",
        DEBUG="0",
        ALLOWED_HOSTS="testserver,127.0.0.1",
        LOG_LEVEL="WARNING",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{pg_port}/warplab",
        REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
        CHANNELS_PREFIX="warplab-chaos",
        WARPLAB_BROKER_PREFIX="warplab-chaos-",
        WARPLAB_RUNS_PER_MINUTE="10000",
        WARPLAB_RUNS_IN_FLIGHT="0",
        WARPLAB_QUEUE_CAP="0",
        WARPLAB_LOST_AFTER_SECONDS="2",
        WARPLAB_REAPER_SECONDS="2",
    )
    import django

    django.setup()


class Site:
    """Learners on the API through Django's test client; every response's status is counted by phase."""

    def __init__(self, learners: int):
        from django.test import Client

        from tests.labs.factories import make_student

        self.clients = []
        for i in range(learners):
            client = Client(raise_request_exception=False)
            client.force_login(make_student(f"learner{i:02d}"))
            self.clients.append(client)
        self.statuses: dict[str, list[int]] = {}
        self.expected: dict[int, str] = {}

    def submit(self, phase: str, source: str, verdict: str) -> int | None:
        client = self.clients[len(self.expected) % len(self.clients)]
        body = {"exercise": "vector-add", "language": "numba", "source": source}
        response = client.post("/api/submissions", body, content_type="application/json")
        self.statuses.setdefault(phase, []).append(response.status_code)
        if response.status_code == 201:
            self.expected[response.json()["id"]] = verdict
            return response.json()["id"]
        return None

    def read_all(self, phase: str) -> None:
        for i, run_id in enumerate(self.expected):
            response = self.clients[i % len(self.clients)].get(f"/api/submissions/{run_id}")
            self.statuses.setdefault(phase, []).append(response.status_code)

    def server_errors(self, phase: str) -> int:
        return sum(code >= 500 for code in self.statuses.get(phase, []))


def retrying(what: Callable[[], Any], seconds: float = 60) -> Any:
    """Run a database read, reconnecting while PostgreSQL comes back."""
    from django.db import InterfaceError, OperationalError, connection

    deadline = time.monotonic() + seconds
    while True:
        try:
            return what()
        except (OperationalError, InterfaceError):
            connection.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def wait_until_serving(site: Site, probe: Callable[[], bool], seconds: float = 60) -> float:
    """Seconds until the site answers again (a read of the learner's runs that is not a 5xx)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        from django.db import connection

        connection.close()
        if probe():
            return round(time.monotonic() - started, 2)
        time.sleep(0.5)
    raise RuntimeError("the site did not recover")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--kills", type=int, default=20, help="kills of each kind (main process, pool process), even")
    parser.add_argument("--redis-port", type=int, default=6391)
    parser.add_argument("--pg-port", type=int, default=5441)
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="warplab-chaos-") as tmp:
        folder = Path(tmp)
        (folder / "redis").mkdir()
        with (
            private_redis(args.redis_port, folder / "redis") as redis,
            private_postgres(args.pg_port, folder) as postgres,
        ):
            configure(args.redis_port, args.pg_port)
            report = run(args, redis, postgres)
    report["wall_seconds"] = round(time.monotonic() - started, 1)
    report["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


def run(args: argparse.Namespace, redis: Outage, postgres: Outage) -> dict:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from tests import chaos, processes

    call_command("migrate", verbosity=0)
    call_command("sync_labs", verbosity=0)
    site = Site(learners=20)
    web = processes.start_web_worker(
        processes.database_url(connection.settings_dict),
        beat=True,
        WARPLAB_LOST_AFTER_SECONDS="2",
        WARPLAB_REAPER_SECONDS="2",
    )
    fleet = chaos.Fleet()
    outages: dict[str, dict] = {}
    mix = iter(chaos.MIX * args.runs)
    per_phase = args.runs // 4

    def submit_batch(phase: str, n: int) -> None:
        for _ in range(n):
            source, verdict = next(mix)
            site.submit(phase, source, verdict)

    def kills(n: int) -> None:
        for i in range(n):
            target = "main" if i % 2 == 0 else "pool"
            deadline = time.monotonic() + 120
            run_now = None
            while run_now is None and time.monotonic() < deadline:
                run_now = retrying(lambda: chaos.running_run(settings.WARPLAB_MAX_ATTEMPTS - 1))
                time.sleep(0.1)
            if run_now is None:
                raise RuntimeError("no run was running to kill")
            time.sleep(0.3)
            fleet.kill(target, run_now.pk)

    def outage(name: str, server: Outage, down_for: float = 3.0) -> None:
        t0 = time.monotonic()
        server.stop()
        site.submit(f"{name} outage", *chaos.MIX[0])  # while it is down: counted apart
        time.sleep(max(0.0, down_for - (time.monotonic() - t0)))
        server.start()
        down = round(time.monotonic() - t0, 2)
        recovered = wait_until_serving(site, lambda: site.clients[0].get("/api/submissions").status_code < 500)
        outages[name] = {"down_seconds": down, "site_recovered_after_s": recovered}

    try:
        submit_batch("start", per_phase)
        kills(args.kills // 2)
        outage("redis", redis)
        submit_batch("after redis restart", per_phase)
        kills(args.kills // 2)
        submit_batch("after redis restart", per_phase)
        kills(args.kills // 2)
        outage("postgres", postgres)
        submit_batch("after postgres restart", args.runs - len(site.expected))
        kills(args.kills // 2)
        finished = retrying(lambda: chaos.wait_for_all(site.expected, timeout=600), seconds=600)
        site.read_all("read back after recovery")
        report = retrying(lambda: chaos.audit(site.expected))
    finally:
        fleet.stop()
        web.stop()
    return {
        "runs": report.total,
        "finished": report.finished,
        "all_finished_in_time": finished,
        "lost": report.lost,
        "duplicated": report.duplicated,
        "left_running": report.left_running,
        "wrong_verdict": report.wrong_verdict,
        "infrastructure_errors": report.errors,
        "runs_by_attempts": report.attempts,
        "kills": {
            target: {
                "count": sum(k.target == target for k in fleet.kills),
                "orphans_left": sum(k.orphans_gone_after is None for k in fleet.kills if k.target == target),
                "orphans_gone_after_max_s": max(
                    (k.orphans_gone_after or 0 for k in fleet.kills if k.target == target), default=0
                ),
                "processes_below_the_killed_one": [k.orphans for k in fleet.kills if k.target == target],
            }
            for target in ("main", "pool")
        },
        "outages": outages,
        "http": {phase: dict(sorted(_count(codes).items())) for phase, codes in site.statuses.items()},
        "server_errors_after_recovery": sum(site.server_errors(p) for p in site.statuses if "outage" not in p),
        "worker_starts": fleet.starts,
    }


def _count(codes: list[int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for code in codes:
        out[str(code)] = out.get(str(code), 0) + 1
    return out


if __name__ == "__main__":
    main()
