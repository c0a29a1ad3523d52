"""Real service processes for integration and browser tests: Celery workers on the test database."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import redis
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / ".run"


def database_url(settings_dict: dict) -> str:
    """A DATABASE_URL naming the test database this process is using."""
    engine, name = settings_dict["ENGINE"], settings_dict["NAME"]
    if engine.endswith("sqlite3"):
        return f"sqlite:///{name}"
    user, host, port = settings_dict.get("USER") or "", settings_dict.get("HOST") or "", settings_dict.get("PORT") or ""
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{host}{':' + str(port) if port else ''}/{name}"


def purge_queues(*queues: str) -> None:
    """Drop jobs left in the test broker by earlier tests, so no stale job lands on a reused id."""
    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"]
    keys = [prefix + key for key in (*queues, "unacked", "unacked_index")]
    redis.from_url(settings.CELERY_BROKER_URL).delete(*keys)


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the test process dies, so a killed test run leaves no stale worker."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Service:
    """One child process with its log in .run/; stopped with its whole process group."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], ready_text: str = "ready."):
        self.name, self.log_path = name, LOGS / f"test-{name}.log"
        self.log = self.log_path.open("w")
        self.process = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self._wait_for(ready_text)

    def _wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log_path.read_text():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not start:\n{self.log_path.read_text()[-3000:]}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            self.process.wait(timeout=30)
        self.log.close()

    def stop(self) -> None:
        self.kill(signal.SIGTERM)


def base_env(db_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(DATABASE_URL=db_url, DJANGO_SETTINGS_MODULE="labsite.settings", PYTHONUNBUFFERED="1")
    return env


def start_web_worker(db_url: str, *, beat: bool = False, **extra: str) -> Service:
    """The `web` queue's worker on the test database; `beat` runs the periodic tasks (the reaper) in it too."""
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "labsite",
        "worker",
        "-Q",
        "web",
        "-P",
        "solo",
        "-n",
        "web-test@%h",
        "--without-gossip",
        "--without-mingle",
        "--loglevel",
        "INFO",
    ]
    if beat:
        argv += ["-B", "-s", str(LOGS / f"test-beat-{os.getpid()}.schedule")]
    return Service("worker-web", argv, base_env(db_url) | extra)


def start_worker(
    name: str, *, backend: str = "sim", pool: str = "sim", ready_text: str = "ready.", **extra: str
) -> Service:
    """`python -m gpu_worker serve` on the test broker; `extra` adds or overrides variables (a broker prefix too)."""
    # The worker gets the broker address and nothing else of the web's: no database, no secret key.
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "VIRTUAL_ENV")}
    env.update(
        WARPLAB_BROKER_URL=settings.CELERY_BROKER_URL,
        WARPLAB_POOL=pool,
        WARPLAB_BACKEND=backend,
        WARPLAB_BROKER_PREFIX=settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"],
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return Service(name, [sys.executable, "-m", "gpu_worker", "serve"], env, ready_text)


def start_sim_worker(name: str = "worker-sim", **extra: str) -> Service:
    return start_worker(name, **extra)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (its pool processes, their sandboxes), read from /proc."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
        found += [] if parent == pid else [parent]
    return found


def alive(pids: list[int]) -> list[int]:
    """Those of `pids` that still run (a zombie has ended)."""
    running = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                running.append(pid)
    return running


def wait_until_finished(submission: Any, timeout: float = 90) -> Any:
    """Poll the database until the run is done or errored; fail with the sim worker's log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        submission.refresh_from_db()
        if submission.finished:
            return submission
        time.sleep(0.2)
    log = (LOGS / "test-worker-sim.log").read_text()[-2000:]
    raise AssertionError(f"submission {submission.pk} still {submission.status}; sim worker log:\n{log}")
