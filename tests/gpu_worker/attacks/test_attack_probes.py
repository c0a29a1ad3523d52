"""Attacks from inside a learner's Numba module: each row is one attack, and every one of them fails.

All rows run in one sandboxed job (see `probe_module`), as alice's module-level
code, with the worker's secrets in its environment and listeners of the host
waiting for a connection. A row is an attack and what stopping it looks like.
The module rules would refuse such a module before it runs (the first test);
the jobs here run with them off, to show the sandbox holds on its own.
"""

from __future__ import annotations

import ast
import json
import os
import socket
import tempfile
from pathlib import Path

import pytest
from attack_jobs import run_all
from engine_factories import alices_job
from probe_module import module, report

from gpu_worker.backends.module_rules import check_module

SECRET = "alice-must-never-see-this-b7e1"
REPO = Path(__file__).resolve().parents[3]

# Attacks that must raise: (name, body of the attack)
BLOCKED = [
    ("tcp to a service of the host", 'socket.create_connection(("127.0.0.1", {PORT}), timeout=2)'),
    ("tcp to the internet", 'socket.create_connection(("8.8.8.8", 53), timeout=2)'),
    ("udp to the internet", 's = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b"x", ("8.8.8.8", 53))'),
    ("a unix socket of the host", 's = socket.socket(socket.AF_UNIX)\ns.connect("{UNIX_PATH}")'),
    ("an abstract unix socket of the host", 's = socket.socket(socket.AF_UNIX)\ns.connect("\\0{ABSTRACT}")'),
    ("redis's unix socket", 's = socket.socket(socket.AF_UNIX)\ns.connect("/var/run/redis/redis-server.sock")'),
    ("postgres's unix socket", 's = socket.socket(socket.AF_UNIX)\ns.connect("/var/run/postgresql/.s.PGSQL.5432")'),
    ("the repository's .env", 'return open("{REPO}/.env").read()[:100]'),
    ("the main checkout's .env", 'return open("/work/main/.env").read()[:100]'),
    ("the web settings module", 'return open("{REPO}/labsite/settings.py").read()[:100]'),
    ("a lab's reference solution", 'return os.listdir("{REPO}/labs/content")'),
    ("/etc/shadow", 'return open("/etc/shadow").read()[:100]'),
    ("pid 1's environment (bwrap's, as root)", 'return open("/proc/1/environ").read()'),
    ("another job's file in the host's /tmp", 'return open("{BOBS_FILE}").read()'),
    ("the uid pool's lock files", 'return os.listdir("/run/warplab-sandbox-uids")'),
    ("the worker's memory", 'return open("/proc/{HOST_PID}/mem", "rb").read(1)'),
    ("write to /usr", 'open("/usr/lib/planted", "w").write("x")'),
    ("write to the package the worker runs", 'open("{PACKAGE}/planted.py", "w").write("x")'),
    ("write to /etc", 'open("/etc/planted", "w").write("x")'),
    ("write to /", 'open("/planted", "w").write("x")'),
    ("write to /dev/shm", 'open("/dev/shm/planted", "w").write("x")'),
    ("a file over the file size limit", 'open("/tmp/big", "wb").write(b"x" * (80 << 20))'),
    ("kill -9 the worker's pid", "os.kill({HOST_PID}, signal.SIGKILL)"),
    ("kill -9 pid 1 of the namespace", "os.kill(1, signal.SIGKILL)"),
    ("become root again", "os.setuid(0)"),
    ("unshare a user namespace", "check(libc.unshare(0x10000000))"),
    ("unshare a mount namespace", "check(libc.unshare(0x00020000))"),
    ("unshare a network namespace", "check(libc.unshare(0x40000000))"),
    ("unshare -Ur (the tool)", 'subprocess.run(["unshare", "-Ur", "true"], check=True, capture_output=True)'),
    ("clone with CLONE_NEWUSER", "pid = sc('clone', 0x10000000 | 17, 0, 0, 0, 0)\nif pid == 0: os._exit(0)"),
    ("setns into pid 1's network", 'sc("setns", os.open("/proc/1/ns/net", os.O_RDONLY), 0)'),
    ("mount a tmpfs", 'check(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))'),
    ("pivot_root", 'sc("pivot_root", b"/tmp", b"/tmp")'),
    ("chroot", 'os.chroot("/tmp")'),
    ("io_uring_setup", 'sc("io_uring_setup", 8, ctypes.create_string_buffer(120))'),
    ("keyctl (the session keyring)", 'sc("keyctl", 0, -3, 0)'),
    ("add_key", 'sc("add_key", b"user", b"warplab", b"secret", 6, -3)'),
    ("ptrace the parent", "check(libc.ptrace(16, os.getppid(), None, None))"),
    ("ptrace TRACEME", "check(libc.ptrace(0, 0, None, None))"),
    ("process_vm_readv of pid 1", 'sc("process_vm_readv", 1, 0, 0, 0, 0, 0)'),
    ("bpf", 'sc("bpf", 0, ctypes.create_string_buffer(128), 128)'),
    ("perf_event_open", 'sc("perf_event_open", ctypes.create_string_buffer(128), 0, -1, -1, 0)'),
    ("userfaultfd", 'sc("userfaultfd", 0)'),
    ("load a kernel module", 'sc("init_module", b"", 0, b"")'),
    ("kexec", 'sc("kexec_load", 0, 0, 0, 0)'),
]

# Attacks that get an answer, and what the answer may be: (name, body, check of what it returned)
SEEN = [
    ("the sandbox's own environment", "return dict(os.environ)", lambda got: SECRET not in json.dumps(got)),
    (
        "every process in /proc",
        'return {p: open(f"/proc/{p}/cmdline").read() for p in os.listdir("/proc") if p.isdigit()}',
        lambda got: len(got) <= 3 and "pytest" not in json.dumps(got) and "{HOST_PID}" not in got,
    ),
    (
        "fill /tmp (a tmpfs) past its size",
        """
        written, chunk = 0, b"x" * (16 << 20)
        try:
            for i in range(40):  # 640 MB at most in files of 16 MB (under the file size limit), against 512 MB
                with open(f"/tmp/fill-{i}", "wb") as f:
                    f.write(chunk)
                written += len(chunk)
        except OSError as exc:
            return {"written": written, "error": exc.errno}
        finally:
            for i in range(40):
                if os.path.exists(f"/tmp/fill-{i}"):
                    os.remove(f"/tmp/fill-{i}")
        return {"written": written}
        """,
        lambda got: got["written"] <= 512 << 20 and got.get("error") == 28,  # ENOSPC
    ),
    (
        "a thread bomb",
        """
        stop, threads = threading.Event(), []
        try:
            while len(threads) < 5000:
                t = threading.Thread(target=stop.wait)
                t.start()
                threads.append(t)
        except RuntimeError as exc:
            return {"threads": len(threads), "error": str(exc)}
        finally:
            stop.set()
            for t in threads:
                t.join()
        return {"threads": len(threads)}
        """,
        lambda got: "error" in got and got["threads"] < 1000,
    ),
]


@pytest.fixture(scope="module")
def reported():
    with tempfile.TemporaryDirectory() as host_tmp, socket.socket() as tcp:
        tcp.bind(("127.0.0.1", 0))
        tcp.listen()
        unix = socket.socket(socket.AF_UNIX)
        unix.bind(f"{host_tmp}/worker.sock")
        unix.listen()
        abstract = socket.socket(socket.AF_UNIX)
        abstract.bind(f"\0warplab-attack-{os.getpid()}")
        abstract.listen()
        bobs_file = Path(host_tmp) / "bobs-job-output.txt"
        bobs_file.write_text("bob's answer")
        values = {
            "PORT": tcp.getsockname()[1],
            "UNIX_PATH": f"{host_tmp}/worker.sock",
            "ABSTRACT": f"warplab-attack-{os.getpid()}",
            "REPO": REPO,
            "BOBS_FILE": bobs_file,
            "HOST_PID": os.getpid(),
            "PACKAGE": REPO / "gpu_worker",
        }
        source = module([(n, b) for n, b in BLOCKED] + [(n, b) for n, b, _ in SEEN], **values)
        with pytest.MonkeyPatch.context() as env:
            env.setenv("SECRET_KEY", SECRET)
            env.setenv("DATABASE_URL", f"postgres://warplab:{SECRET}@db/warplab")
            outcome = run_all({"probes": alices_job(source, wall_seconds=60)})["probes"]
        unix.close()
        abstract.close()
        assert not (REPO / "gpu_worker" / "planted.py").exists()
        return outcome, report(outcome.result.output), values


def test_the_module_rules_refuse_the_probing_module_before_anything_runs():
    breach = check_module(ast.parse(module([BLOCKED[0]], PORT=1)))
    assert breach is not None and "cannot be imported" in breach.message


def test_the_probing_job_itself_is_accepted_and_leaks_no_secret(reported):
    outcome, _, _ = reported
    assert outcome.result.verdict == "accepted", (outcome.result.message, outcome.result.output[-2000:])
    assert SECRET not in outcome.json()


@pytest.mark.parametrize(("name", "body"), BLOCKED, ids=[n for n, _ in BLOCKED])
def test_the_attack_fails(reported, name, body):
    assert reported[1][name].startswith("blocked: "), reported[1][name]


@pytest.mark.parametrize(("name", "body", "harmless"), SEEN, ids=[n for n, _, _ in SEEN])
def test_what_the_attack_sees_is_harmless(reported, name, body, harmless):
    got = reported[1][name]
    assert got.startswith("got: "), got
    value = json.loads(got.removeprefix("got: "))
    if isinstance(value, dict) and "{HOST_PID}" in json.dumps(harmless.__code__.co_consts):
        value.pop(str(reported[2]["HOST_PID"]), None)
    assert harmless(value), value
