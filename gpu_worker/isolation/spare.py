"""Warm starts: one spare sandboxed child, started while the current job runs, serves the next job.

A fresh child costs its imports (Python, NumPy, Numba; on a GPU CuPy and a
CUDA context, about 1.3 s on an H200). A spare is started exactly like a cold
child (bwrap, the uid switch, rlimits, a private /tmp; see `gpu_worker.isolation.sandbox`)
but with `--spare`: it imports its backend, sends `ready` on its message pipe
and blocks reading its request. `run_job` takes it instead of starting a child
and at once starts the next spare, so the next job finds one ready. A spare
serves one job and is gone with it; nothing of a job can reach the next, which
is another process in another sandbox with another /tmp.

Spares are keyed by (backend, the job's limits, the extra processes): a job
whose limits differ from the spare's gets a cold start (and the spare for its
key is started next; one spare per backend is kept). A spare that died while
waiting, or is not ready in time, is thrown away and the job starts cold.

The CPU limit: the spare starts with the job's RLIMIT_CPU plus
`CPU_ALLOWANCE` for its imports and, once warm, lowers it to what it used plus
the job's seconds, so the job gets its own seconds from the hand-over. The
wall-clock watchdog counts from the hand-over, and the output cap applies to
what is read from then on (a spare's imports print nothing; if they did, it
would sit in the pipe and count, as a cold child's would).

Switch: `WARPLAB_SPARE_SANDBOX=0` disables spares, `=1` enables them; without
the variable they are off unless the process calls `set_default(True)`, which
the Celery worker does (`gpu_worker.worker.service`); the command line stays cold.

The learner's compile process (`compile_server`: Numba imported and its first compile done, 1 to 3 CPU
seconds) is warmed in a spare only while this worker's jobs use it (`wants_compiler`): a CUDA C++ job, or
one whose source the compile cache already holds, never does, and under a class's load every spare
warming one anyway kept the host's cores busy for nothing. Switch: `WARPLAB_SPARE_COMPILER=always`,
`never`, or `auto` (the default): warm while any of the last `COMPILER_MEMORY` jobs needed a compile, and
for a worker's first jobs.

On a GPU a spare also rehearses, while it waits, the check of the lab its worker last served
(`backends.rehearsal`: CuPy's kernels loaded on a capturing stream, nothing run on the GPU).
Switch: `WARPLAB_SPARE_REHEARSAL=0` leaves the check out (the spare's other warm-ups stay).

Spares belong to the process that started them, the one that runs the jobs
(in Celery's prefork pool a child process: the first spare is started
from `worker_process_init` there, the others from `run_job`): bwrap's
`--die-with-parent` kills a spare when the thread that started it ends, so
spares are started from the thread that runs the jobs, never from a
short-lived one (starting is only a fork and exec; the imports happen in the
spare). `shutdown` runs at exit; a forked copy of this process forgets the
spares it inherited, which are not its own.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import json
import logging
import os
import selectors
import threading
import time
from dataclasses import dataclass, field

from gpu_worker.isolation import sandbox
from gpu_worker.measurement.gpu_lock import open_worker_lock_fd
from gpu_worker.protocol import Limits

log = logging.getLogger(__name__)
ENV = "WARPLAB_SPARE_SANDBOX"
CPU_ALLOWANCE = 60  # CPU seconds a spare may spend on its imports before it lowers its limit
READY_TIMEOUT = 30.0  # how long a job waits for a spare that is still importing
Key = tuple[str, str, int]
_default = False
COMPILER_ENV = "WARPLAB_SPARE_COMPILER"
REHEARSAL_ENV = "WARPLAB_SPARE_REHEARSAL"
COMPILER_MEMORY = 8  # jobs: a worker whose last 8 jobs compiled nothing warms no compiler for the next
_compiles: collections.deque[bool] = collections.deque(maxlen=COMPILER_MEMORY)  # did each recent job compile?


def set_default(enabled: bool) -> None:
    """Whether spares are used when WARPLAB_SPARE_SANDBOX is not set (the Celery worker: yes)."""
    global _default
    _default = enabled


def enabled() -> bool:
    return _switch(ENV, _default)


def _switch(name: str, default: bool) -> bool:
    """An on/off variable: `default` when unset; "0", "", "false", "no" and "off" are off."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in ("0", "", "false", "no", "off")


def note_compile(needed: bool) -> None:
    """Whether this job needs the learner's compile process (a Numba source the compile cache lacks)."""
    _compiles.append(bool(needed))


def rehearses() -> bool:
    """Whether a GPU spare rehearses its worker's last lab's check (see the module); on unless switched off."""
    return _switch(REHEARSAL_ENV, True)


def wants_compiler() -> bool:
    """Whether the next spare warms the learner's compile process (see the module)."""
    rule = os.environ.get(COMPILER_ENV, "auto").strip().lower()
    if rule in ("always", "never"):
        return rule == "always"
    return len(_compiles) < COMPILER_MEMORY or any(_compiles)


# Enforced by the engine from the hand-over on (the wall clock, the output it keeps), not fixed at a child's start:
# a spare serves jobs that differ only in these.
HANDOVER_LIMITS = frozenset({"wall_seconds", "output_bytes"})


def key_of(backend: str, limits: Limits, extra_processes: int) -> Key:
    return (backend, limits.model_dump_json(exclude=set(HANDOVER_LIMITS)), int(extra_processes))


@dataclass
class Spare:
    """A started child waiting for its request, and what it holds open (the cuda backend's GPU lock)."""

    key: Key
    started: sandbox.Started
    owner: int = field(default_factory=os.getpid)
    lock_fd: int | None = None
    born: float = field(default_factory=time.monotonic)

    @property
    def pid(self) -> int:
        """The sandbox's (bwrap's) process id on this host: a new one for every job."""
        return self.started.session.proc.pid

    def wait_ready(self, timeout: float) -> bool:
        """Whether the spare is alive and has said `ready` (reading nothing past that line)."""
        fd, line = self.started.msg_r, b""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as readable:
            readable.register(fd, selectors.EVENT_READ)
            while not line.endswith(b"\n"):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not readable.select(timeout=remaining):
                    return False
                chunk = os.read(fd, 4096)
                if not chunk:
                    return False  # it died while waiting
                line += chunk
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("type") != "ready":
            return False
        if message.get("problem"):  # the job will do that part itself; whoever runs the worker should know
            log.warning("spare sandbox %s warmed up only in part: %s", self.pid, message["problem"])
        return self.started.session.proc.poll() is None

    def release(self) -> None:
        """After its job: close what the spare held for it (the pipes are closed by `run_sandboxed`)."""
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None

    def discard(self) -> None:
        """Stop an unused spare and everything in its sandbox; close its pipes."""
        started = self.started
        if self.owner == os.getpid():
            with contextlib.suppress(OSError):  # bwrap's report names the namespace's PID 1, to kill them all
                os.set_blocking(started.info_r, False)
                while chunk := os.read(started.info_r, 4096):
                    started.session.read_info(chunk)
            started.session.stop(grace=0)
        for fd in (started.req_w, started.msg_r, started.info_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        if started.session.proc.stdout is not None:
            started.session.proc.stdout.close()
        if started.session.namespace_init is not None:
            with contextlib.suppress(OSError):
                os.close(started.session.namespace_init)
            started.session.namespace_init = None
        self.release()


class _Pool:
    """At most one spare per backend."""

    def __init__(self) -> None:
        self.spares: dict[Key, Spare] = {}
        self.lock = threading.Lock()

    def take(self, backend: str, limits: Limits, extra_processes: int) -> Spare | None:
        """The ready spare for this job's key, or None (none, another key, dead or not ready: start cold)."""
        with self.lock:
            spare = self.spares.pop(key_of(backend, limits, extra_processes), None)
        if spare is None:
            return None
        if spare.owner != os.getpid() or not spare.wait_ready(READY_TIMEOUT):
            spare.discard()
            return None
        return spare

    def refill(self, backend: str, limits: Limits, extra_processes: int, rehearsal: str | None = None) -> Spare:
        """Start the spare for this key (dropping this backend's spare for another key, if any); it warms the
        learner's compile process where `wants_compiler` says so, and on a GPU rehearses `rehearsal` (the check
        of the lab just served: `backends.rehearsal`) while it waits."""
        key = key_of(backend, limits, extra_processes)
        with self.lock:
            stale = [self.spares.pop(k) for k in list(self.spares) if k[0] == backend]
        for old in stale:
            old.discard()
        lock_fd = open_worker_lock_fd() if backend == "cuda" else None
        try:
            started = sandbox.start(
                backend,
                limits,
                extra_processes,
                (lock_fd,) if lock_fd is not None else (),
                spare_cpu_allowance=CPU_ALLOWANCE,
                spare_compiler=wants_compiler(),
                spare_rehearsal=rehearsal,
            )
        except BaseException:
            if lock_fd is not None:
                os.close(lock_fd)
            raise
        spare = Spare(key, started, lock_fd=lock_fd)
        with self.lock:
            self.spares[key] = spare
        return spare

    def shutdown(self) -> None:
        with self.lock:
            spares, self.spares = list(self.spares.values()), {}
        for spare in spares:
            spare.discard()

    def forget(self) -> None:
        """In a forked copy of this process: the spares are the parent's, not ours to use or stop."""
        self.spares = {}
        self.lock = threading.Lock()


POOL = _Pool()
take = POOL.take
refill = POOL.refill
shutdown = POOL.shutdown
atexit.register(shutdown)
os.register_at_fork(after_in_child=POOL.forget)
