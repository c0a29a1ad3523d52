"""Attacks on the other jobs of the host: quotas held, memory over forked children, signals, files left behind.

Phase one runs four jobs at once, as four students' jobs on one worker host:
alice holds every process she may have, mallory forks four children of
768 MB each under a 2 GB limit, eve kills her own sandbox's parent, and bob submits a correct
kernel while they do. Phase two is the next job on the host, looking for
what phase one left. Each row names an attack and what must hold.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from attack_jobs import run_all
from engine_factories import alices_job, module_with
from probe_module import module, report

from gpu_worker.isolation import sandbox

TOKEN = f"planted-{os.getpid()}-{time.time_ns()}"
CHILD_MB = 768
MEMORY_MB = 2048  # mallory's job's limit: her four children want 3 GB
FLOOR_MB = MEMORY_MB + 2048  # the most the host's available memory may drop: her limit, and the other three jobs

HOLDER = [
    (
        "hold every process of the quota",
        """
        children = []
        while len(children) < 5000:
            try:
                pid = os.fork()
            except OSError as exc:
                break
            if pid == 0:
                time.sleep(8)
                os._exit(0)
            children.append(pid)
        time.sleep(4)  # while bob's job runs
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        return {"held": len(children)}
        """,
    ),
    (
        "plant a binary and caches for the next job",
        """
        for folder in ("/tmp", "/tmp/numba-cache", "/tmp/cuda-cache", os.environ["HOME"], "/tmp/bin"):
            os.makedirs(folder, exist_ok=True)
            path = f"{folder}/{TOKEN}"
            with open(path, "w") as f:
                f.write("#!/bin/sh\\necho {TOKEN}\\n")
            os.chmod(path, 0o777)
        return "planted"
        """,
    ),
    (
        "plant symlinks for the host",
        """
        planted = []
        links = [("warplab-etc-passwd", "/etc/shadow"), ("worker.sock", "/etc/shadow"), ("{TOKEN}-root", "/")]
        for name, target in links:
            if not os.path.lexists(f"/tmp/{name}"):  # the module may run twice in one job (its PTX analysis)
                os.symlink(target, f"/tmp/{name}")
            planted.append(name)
        return planted
        """,
    ),
]
MEMORY = [
    (
        "four forked children of 768 MB each",
        """
        import select
        import numpy as np
        # each child holds its memory until every one has its own or died: all four at once, however slowly a
        # loaded machine runs them (without the wait, one could end before the next had written its pages)
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        pids = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                hog = np.ones({CHILD_MB} << 20, dtype=np.uint8)  # every page written
                os.write(ready_w, b"x")
                os.read(go_r, 1)  # the parent closes it
                os._exit(0)
            pids.append(pid)
        ended, ready, deadline = {}, 0, time.monotonic() + 20
        while ready + len(ended) < 4 and time.monotonic() < deadline:
            if select.select([ready_r], [], [], 0.1)[0]:
                ready += len(os.read(ready_r, 4))
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid:
                ended[pid] = status
        os.close(go_w)
        return [ended[pid] if pid in ended else os.waitpid(pid, 0)[1] for pid in pids]
        """,
    ),
]
NEXT = [
    (
        "find what the earlier jobs planted",
        """
        found = []
        for top in ("/tmp", os.environ["HOME"], "/dev/shm"):
            for folder, _, files in os.walk(top):
                found += [f"{folder}/{f}" for f in files if "{TOKEN}" in f]
        return found
        """,
    ),
]
SIGNALS = """
import os, signal
for target in (os.getppid(), 1):  # bwrap, root in the namespace: not hers to signal
    try:
        os.kill(target, signal.SIGKILL)
    except OSError:
        pass
os.killpg(0, signal.SIGKILL)  # her own process group: her job ends there
"""


def mallorys_job(source: str):
    job = alices_job(source, wall_seconds=60)
    job.exercise.limits.memory_mb = MEMORY_MB
    return job


def _sample_available(samples: list[int], stop: threading.Event) -> None:
    while not stop.is_set():
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                samples.append(int(line.split()[1]) // 1024)
        stop.wait(0.05)


@pytest.fixture(scope="module")
def phases():
    values = {"TOKEN": TOKEN, "CHILD_MB": CHILD_MB}
    samples: list[int] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_available, args=(samples, stop))
    sampler.start()
    try:
        first = run_all(
            {
                "alice holds the quota": alices_job(module(HOLDER, **values), wall_seconds=60),
                "mallory forks for memory": mallorys_job(module(MEMORY, **values)),
                "eve signals": alices_job(module_with(SIGNALS)),
                "bob": alices_job(module_with("import time\ntime.sleep(1)")),
            }
        )
    finally:
        stop.set()
        sampler.join()
    host_tmp = [p.name for p in Path("/tmp").iterdir()]
    second = run_all({"next": alices_job(module(NEXT, **values))})
    return first, second["next"], samples, host_tmp


def test_bobs_job_is_accepted_while_alice_holds_her_whole_process_quota(phases):
    first = phases[0]
    held = report(first["alice holds the quota"].result.output)["hold every process of the quota"]
    assert held.startswith("got: ") and int(held.split()[-1].rstrip("}")) > 100, held
    assert first["bob"].result.verdict == "accepted", first["bob"].result.message
    assert first["bob"].result.sandbox["uid"] != first["alice holds the quota"].result.sandbox["uid"] or (
        os.geteuid() != 0
    )


def test_four_forked_children_are_bounded_together_and_the_host_keeps_its_floor(phases):
    first, _, samples, _ = phases
    outcome = first["mallory forks for memory"]
    statuses = report(outcome.result.output).get("four forked children of 768 MB each", "")
    assert samples and max(samples) - min(samples) < FLOOR_MB, (max(samples), min(samples))
    if outcome.result.sandbox.get("cgroup"):  # the kernel's own count of the job: all its processes together
        assert outcome.result.sandbox["memory_peak_mb"] <= MEMORY_MB
        assert "9" in statuses or outcome.result.verdict == "runtime_error", statuses  # some child was killed


def test_killing_its_own_parent_ends_only_that_job(phases):
    first = phases[0]
    assert first["eve signals"].result.verdict == "runtime_error"
    assert first["bob"].result.verdict == "accepted"


def test_nothing_planted_reaches_the_next_job(phases):
    found = report(phases[1].result.output)["find what the earlier jobs planted"]
    assert found == "got: []", found
    assert phases[1].result.verdict == "accepted"


def test_symlinks_planted_in_the_jobs_tmp_never_reach_the_hosts(phases):
    assert not [name for name in phases[3] if TOKEN in name]
    stub = sandbox._stub_etc() / "passwd"
    assert not stub.is_symlink() and stub.read_text().startswith("nobody:x:65534")
