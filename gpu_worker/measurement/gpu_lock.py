"""The per-GPU lock: timed runs have the GPU alone; correctness work shares it, but never with a timed run.

Two kinds of holder, on /tmp/warplab-gpu-<uuid>.lock:
- a timed measurement takes it exclusively (`timing_lock`): nothing else runs kernels on the GPU
  while its samples are taken, or each would slow the other and the samples would spread;
- correctness work (drawing inputs on the device, the check launch, computing the expected
  outputs and comparing) takes it shared (`sharing_lock`): any number at once, none during a timing.

Linux grants a shared lock while an exclusive one waits, so a stream of checks would starve the
timings (a class's load is mostly checks). A gate in front makes it writer-first: a timing takes the
gate and keeps it until it is done; a check passes through the gate (takes and drops it shared)
before it asks for the lock. So a waiting timing lets the checks already inside finish, and holds
back the ones that come after it.

The gate and the lock are two bytes of one file, locked with open-file-description locks
(F_OFD_SETLK): one descriptor carries both, and a lock belongs to its open file, as `flock`'s
does, so a child that dies releases it. Where the kernel lacks them (EINVAL), a timing takes one
`flock` and correctness work takes nothing, as before the shared kind existed.

`WARPLAB_CHECKS_ALONE=1` makes correctness work take the lock exclusively too (see `CHECKS_ALONE_ENV`).

The lock file lives in the worker's own /tmp, which a sandboxed child does not see (it gets a
private /tmp), so the worker opens it and hands the child an inherited descriptor
(`WARPLAB_GPU_LOCK_FD`). Outside a sandbox (benchmarks, the command line) `GpuLock` opens the
file itself.

A thread never waits for the exclusive lock while it holds the shared one (two such holders would
wait for each other forever): that is refused as a programming error. Shared inside exclusive,
and either inside itself, are free (the holder already has what it needs). Two threads of one
process are two holders, unless they lock through one descriptor (locks belong to the open file).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import math
import os
import re
import signal
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

LOCK_DIR_ENV = "WARPLAB_GPU_LOCK_DIR"
LOCK_FD_ENV = "WARPLAB_GPU_LOCK_FD"
# "1": correctness work takes no lock and may run inside timings, as before the shared kind (run 22). For the
# side-by-side benchmark only (bench/pipeline.py --checks-beside-timings); the sandbox passes it through.
CHECKS_BESIDE_TIMINGS_ENV = "WARPLAB_CHECKS_BESIDE_TIMINGS"
# "1": correctness work takes the lock exclusively, alone on the GPU like a timing. Without MPS the processes
# sharing a GPU are time-sliced, not concurrent: under 8 learners a later size's correctness work held the shared
# kind 0.066 s where it takes 0.003 s alone (run 25), each of its waits for the GPU queued behind the other
# contexts' time slices. Alone, a hold would be the work itself. Run 26 (H100) refused it: alone the holds still
# took 30-48 ms a size (host work on a busy host, not time-slicing) and the jobs an hour fell from 8,829 to 8,421.
# Kept for measuring again once a job's host work is shorter (bench/device_session.sh, step pipeline8-checks-alone).
CHECKS_ALONE_ENV = "WARPLAB_CHECKS_ALONE"

GATE, MAIN = 0, 1  # the bytes of the lock file that stand for the gate and the lock
STAMP = 8  # bytes 8..15: CLOCK_MONOTONIC (one clock for every process of the host) when a timing last let go
_SEEN_STAMP = [-math.inf]  # the stamp as this process read it when it last took the lock exclusively
EXCLUSIVE, SHARED = "exclusive", "shared"


class LockTimeout(TimeoutError):
    """The GPU stayed busy with another timed measurement for longer than we would wait."""


def lock_path(uuid: str, directory: str | None = None) -> str:
    """/tmp/warplab-gpu-<uuid>.lock (the UUID stripped to safe characters)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", uuid)
    return os.path.join(directory or os.environ.get(LOCK_DIR_ENV, "/tmp"), f"warplab-gpu-{safe}.lock")


def open_lock_fd(uuid: str, directory: str | None = None) -> int:
    """Open (creating) the lock file and return a descriptor the child can inherit."""
    fd = os.open(lock_path(uuid, directory), os.O_RDWR | os.O_CREAT, 0o600)
    os.set_inheritable(fd, True)
    return fd


# --- the kernel's locks: a byte of the file (open-file-description locks), or the whole file (flock) ---

_OFD: list[bool | None] = [None]  # whether this kernel has open-file-description locks (found on first use)


def _byte_lock(fd: int, kind: int, byte: int, wait: bool) -> None:
    # struct flock: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid (0 for OFD locks)
    request = struct.pack("hhqqi4x", kind, os.SEEK_SET, byte, 1, 0)
    fcntl.fcntl(fd, fcntl.F_OFD_SETLKW if wait else fcntl.F_OFD_SETLK, request)


def has_ofd_locks(fd: int) -> bool:
    """Whether this kernel locks bytes per open file (Linux 3.15+; a sandbox's kernel may not)."""
    if _OFD[0] is None:
        try:
            _byte_lock(fd, fcntl.F_UNLCK, MAIN + 1, wait=False)  # unlocking an unheld byte: a no-op where supported
            _OFD[0] = True
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise
            _OFD[0] = False
    return bool(_OFD[0])


def _try(take: Callable[[bool], None]) -> bool:
    try:
        take(False)
        return True
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):  # held by another: POSIX allows either
            return False
        raise


def _acquire(take: Callable[[bool], None], release: Callable[[], None], timeout: float) -> None:
    """Take a lock (`take(wait)`); wait blocked in the kernel where we can, so it passes on the moment it is let go.

    Polling with a back-off left the GPU idle between holders for up to the poll's interval, a few
    percent of the lock's time under a class's load (run 21). A blocking wait wakes the next
    waiter at once; its timeout is an interval timer, which only the main thread may use, and only
    when nothing else in the process uses SIGALRM: elsewhere we poll every millisecond.
    """
    if _try(take):
        return
    if _may_block_with_a_timer():
        _acquire_blocking(take, release, timeout)
    else:
        _acquire_polling(take, timeout)


def _may_block_with_a_timer() -> bool:
    return (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    )


def _busy(timeout: float) -> LockTimeout:
    return LockTimeout(f"GPU busy with another timed run for {timeout:.0f} s")


def _acquire_blocking(take: Callable[[bool], None], release: Callable[[], None], timeout: float) -> None:
    def expired(signum: int, frame: Any) -> None:
        raise _busy(timeout)

    previous = signal.signal(signal.SIGALRM, expired)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(timeout, 1e-3))
        take(True)
        signal.setitimer(signal.ITIMER_REAL, 0.0)
    except LockTimeout:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        release()  # the timer may have fired just after the lock came: let it go again
        raise
    finally:
        signal.signal(signal.SIGALRM, previous)


def _acquire_polling(take: Callable[[bool], None], timeout: float, poll: float = 0.001) -> None:
    start = time.monotonic()
    while not _try(take):
        if time.monotonic() - start >= timeout:
            raise _busy(timeout) from None
        time.sleep(poll)


def _flock_take(fd: int) -> Callable[[bool], None]:
    return lambda wait: fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))


def _byte_take(fd: int, kind: int, byte: int) -> Callable[[bool], None]:
    return lambda wait: _byte_lock(fd, kind, byte, wait)


def _byte_release(fd: int, byte: int) -> Callable[[], None]:
    return lambda: _byte_lock(fd, fcntl.F_UNLCK, byte, wait=False)


# --- what this process holds, per lock file: the rules against waiting on oneself ---

# A holder is a thread and a lock file, whatever descriptor it came through: a timing that opens the file
# afresh must not wait for the same thread's shared hold on another descriptor (OFD locks would make it).
_HELD: dict[tuple[int, int, int], list[Any]] = {}  # (thread, device, inode) -> [kind, depth]
_HELD_GUARD = threading.Lock()


def _file_key(fd: int) -> tuple[int, int, int]:
    st = os.fstat(fd)
    return threading.get_ident(), st.st_dev, st.st_ino


@contextmanager
def _holding(fd: int, kind: str, timeout: float, stamps: bool = True) -> Iterator[float]:
    key = _file_key(fd)
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None:
            if held[0] == SHARED and kind == EXCLUSIVE:
                raise RuntimeError("the exclusive GPU lock asked for while this process holds it shared")
            held[1] += 1  # already held as strongly as asked: nothing to take
    if held is not None:
        try:
            yield 0.0
        finally:
            with _HELD_GUARD:
                held[1] -= 1
        return
    start = time.monotonic()
    release = _take(fd, kind, timeout)
    if kind == EXCLUSIVE:
        _SEEN_STAMP[0] = _read_stamp(fd)
    with _HELD_GUARD:
        _HELD[key] = [kind, 1]
    try:
        yield time.monotonic() - start
    finally:
        with _HELD_GUARD:
            del _HELD[key]
        if kind == EXCLUSIVE and stamps:  # a timing let go (correctness work alone is no timing)
            _write_stamp(fd)
        release()


def _read_stamp(fd: int) -> float:
    try:
        data = os.pread(fd, 8, STAMP)
    except OSError:
        return -math.inf
    return struct.unpack("d", data)[0] if len(data) == 8 else -math.inf


def _write_stamp(fd: int) -> None:
    with contextlib.suppress(OSError):  # a read-only lock file: the next timing warms up in full, as before
        os.pwrite(fd, struct.pack("d", time.monotonic()), STAMP)


def last_timing_end() -> float:
    """When a timing last let go of this GPU, in any process (`time.monotonic()`; -inf if none was seen), as
    read when this process last took the lock exclusively: the GPU's clocks are the GPU's, whoever ramped them
    (`timing._warmup` shortens its warm-up after a recent timing)."""
    return _SEEN_STAMP[0]


def _take(fd: int, kind: str, timeout: float) -> Callable[[], None]:
    """Take the lock as `kind` (through the gate); return what lets it go."""
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(deadline - time.monotonic(), 1e-3)

    if not has_ofd_locks(fd):
        if kind == SHARED:
            return lambda: None
        _acquire(_flock_take(fd), lambda: fcntl.flock(fd, fcntl.LOCK_UN), timeout)
        return lambda: fcntl.flock(fd, fcntl.LOCK_UN)
    if kind == EXCLUSIVE:
        _acquire(_byte_take(fd, fcntl.F_WRLCK, GATE), _byte_release(fd, GATE), timeout)
        try:
            _acquire(_byte_take(fd, fcntl.F_WRLCK, MAIN), _byte_release(fd, MAIN), left())
        except BaseException:
            _byte_release(fd, GATE)()
            raise

        def release_both() -> None:
            _byte_release(fd, MAIN)()
            _byte_release(fd, GATE)()

        return release_both
    _acquire(_byte_take(fd, fcntl.F_RDLCK, GATE), _byte_release(fd, GATE), timeout)
    _byte_release(fd, GATE)()  # through the gate: no timing was waiting, or it has gone
    _acquire(_byte_take(fd, fcntl.F_RDLCK, MAIN), _byte_release(fd, MAIN), left())
    return _byte_release(fd, MAIN)


@contextmanager
def locked(fd: int, timeout: float = 60.0, kind: str = EXCLUSIVE, stamps: bool = True) -> Iterator[float]:
    """Hold the lock on `fd` for the block (exclusively unless `kind` is SHARED); yields how long we waited.
    `stamps`: an exclusive hold stamps its end in the file (`last_timing_end`)."""
    with _holding(fd, kind, timeout, stamps) as waited:
        yield waited


class GpuLock:
    """The per-GPU timing lock, opened from its path (for code that runs outside a sandbox)."""

    def __init__(self, uuid: str, directory: str | None = None):
        self.path = lock_path(uuid, directory)

    @contextmanager
    def hold(self, timeout: float = 60.0, kind: str = EXCLUSIVE, stamps: bool = True) -> Iterator[float]:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            with locked(fd, timeout, kind, stamps) as waited:
                yield waited
        finally:
            os.close(fd)


@contextmanager
def timing_lock(uuid: str, timeout: float = 60.0) -> Iterator[float]:
    """The lock a timed measurement takes, alone: the inherited descriptor if the worker gave one, else the file."""
    with _lock(uuid, timeout, EXCLUSIVE) as waited:
        yield waited


@contextmanager
def sharing_lock(uuid: str, timeout: float = 60.0) -> Iterator[float]:
    """The lock correctness work on the GPU takes: shared with other such work, never with a timed run."""
    if os.environ.get(CHECKS_BESIDE_TIMINGS_ENV) == "1":
        yield 0.0
        return
    if checks_alone():
        with _lock(uuid, timeout, EXCLUSIVE, stamps=False) as waited:
            yield waited
        return
    with _lock(uuid, timeout, SHARED) as waited:
        yield waited


def checks_alone() -> bool:
    """Whether correctness work takes the lock exclusively (`CHECKS_ALONE_ENV`)."""
    return os.environ.get(CHECKS_ALONE_ENV) == "1"


@contextmanager
def _lock(uuid: str, timeout: float, kind: str, stamps: bool = True) -> Iterator[float]:
    fd_text = os.environ.get(LOCK_FD_ENV)
    if fd_text and fd_text.isdigit():
        try:
            os.fstat(int(fd_text))
        except OSError:
            fd_text = None
        else:
            with locked(int(fd_text), timeout, kind, stamps) as waited:
                yield waited
            return
    with GpuLock(uuid).hold(timeout, kind, stamps) as waited:
        yield waited


def worker_gpu_uuid() -> str | None:
    """The UUID of the GPU (or MIG slice) this worker serves, through NVML: no CUDA context is made.

    `CUDA_VISIBLE_DEVICES` holding a UUID (the fleet's way: `GPU-...` or `MIG-...`)
    names it; otherwise the first visible index, read as an NVML index (right with
    `CUDA_DEVICE_ORDER=PCI_BUS_ID`, which the fleet sets).
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    if visible.startswith(("GPU-", "MIG-")):
        return visible
    try:
        import pynvml

        pynvml.nvmlInit()
        index = int(visible) if visible.isdigit() else 0
        uuid = pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(index))
        return uuid.decode() if isinstance(uuid, bytes) else str(uuid)
    except Exception:
        return None


def open_worker_lock_fd() -> int | None:
    """A descriptor on this worker's GPU lock for the sandboxed child to inherit, or None without NVML."""
    uuid = worker_gpu_uuid()
    return open_lock_fd(uuid) if uuid else None
