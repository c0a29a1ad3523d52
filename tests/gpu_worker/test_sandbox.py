"""Learners' code runs with no network, no secrets, no host files and as an unprivileged uid of its own."""

from __future__ import annotations

import functools
import json
import os
import socket

import pytest
from engine_factories import Run, alices_job, module_with, run

from gpu_worker.isolation import uid_pool

PROBE = """
import json, os
report = {"uid": os.getuid(), "gid": os.getgid(), "environ": dict(os.environ), "root": sorted(os.listdir("/"))}
for path in ["/etc/shadow", "/root", "/home", "/work/main/labs/content", "/proc/1/environ"]:
    try:
        report[path] = os.listdir(path) if os.path.isdir(path) else open(path).read()[:200]
    except OSError as exc:
        report[path] = f"unreadable: {exc.strerror}"
print("REPORT " + json.dumps(report))
"""


@functools.cache
def probe_run() -> Run:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SECRET_KEY", "alice-must-never-see-this")
        env.setenv("DATABASE_URL", "postgres://warplab:hunter2@db/warplab")
        env.setenv("CELERY_BROKER_URL", "redis://:hunter2@redis:6379/0")
        return run(alices_job(module_with(PROBE)))


def probe() -> dict:
    line = next(line for line in probe_run().result.output.splitlines() if line.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))


def test_the_probe_itself_ran_and_passed():
    assert probe_run().result.verdict == "accepted"


def test_it_has_no_network():
    with socket.socket() as server:  # a service the worker could reach, like its broker
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        source = module_with(f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3)
                print("CONNECTED")
            except OSError as exc:
                print("could not connect:", exc)
            try:
                socket.create_connection(("8.8.8.8", 53), timeout=3)
                print("CONNECTED")
            except OSError as exc:
                print("could not connect:", exc)
        """)
        result = run(alices_job(source)).result
    assert "CONNECTED" not in result.output
    assert result.output.count("could not connect") == 2
    assert "Network is unreachable" in result.output


def test_it_passes_no_secrets():
    environ = probe()["environ"]
    text = json.dumps(environ) + probe_run().json()
    assert "alice-must-never-see-this" not in text and "hunter2" not in text
    assert not {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"} & set(environ)
    assert environ["HOME"].startswith("/tmp/job-") and environ["NUMBA_ENABLE_CUDASIM"] == "1"


def test_a_jobs_blas_runs_on_one_thread_not_one_per_host_core():
    environ = probe()["environ"]
    assert {environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")} == {"1"}


def test_it_runs_as_a_uid_of_its_own_that_the_engine_chose_and_reports():
    uid = probe_run().result.sandbox["uid"]
    if os.geteuid() == 0:  # a root worker leases one uid per running job
        assert uid in uid_pool.uid_range()
    else:  # bwrap's user namespace maps the worker's uid to nobody
        assert uid == 65534
    assert (probe()["uid"], probe()["gid"]) == (uid, uid)


def test_it_shows_no_host_secrets_or_lab_solutions():
    found = probe()
    assert found["/etc/shadow"].startswith("unreadable")
    assert found["/work/main/labs/content"].startswith("unreadable")
    assert found["/root"] in ([], [".pyenv"]) or found["/root"].startswith("unreadable")
    assert found["/home"].startswith("unreadable")
    assert found["/proc/1/environ"].startswith("unreadable") or "SECRET" not in found["/proc/1/environ"]
