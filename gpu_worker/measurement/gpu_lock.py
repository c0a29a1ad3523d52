"""One timed measurement at a time per GPU: an advisory `flock` on /tmp/warplab-gpu-<uuid>.lock.

Correctness runs may share a GPU; timed runs may not, or each would slow the
other. The lock file lives in the worker's own /tmp, which a sandboxed child
does not see (it gets a private /tmp), so the worker opens it and hands the
child an inherited file descriptor (`WARPLAB_GPU_LOCK_FD`); the child takes
and drops the lock on that descriptor around its timing phase only. A child
that dies, however it dies, closes the descriptor and so releases the lock.
Outside a sandbox (benchmarks, the command line) `GpuLock` opens the file
itself.
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LOCK_DIR_ENV = "WARPLAB_GPU_LOCK_DIR"
LOCK_FD_ENV = "WARPLAB_GPU_LOCK_FD"


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


@contextmanager
def locked(fd: int, timeout: float = 60.0) -> Iterator[float]:
    """Hold an exclusive flock on `fd` for the block; yields how long we waited, in seconds."""
    start = time.monotonic()
    _acquire(fd, timeout)
    try:
        yield time.monotonic() - start
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _acquire(fd: int, timeout: float) -> None:
    """Take the lock; wait blocked in the kernel where we can, so it passes on the moment it is let go.

    Polling with a back-off left the GPU idle between holders for up to the poll's interval, a few
    percent of the lock's time under a class's load (run 21). A blocking `flock` wakes the next
    waiter at once; its timeout is an interval timer, which only the main thread may use, and only
    when nothing else in the process uses SIGALRM: elsewhere we poll every millisecond.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    if _may_block_with_a_timer():
        _acquire_blocking(fd, timeout)
    else:
        _acquire_polling(fd, timeout)


def _may_block_with_a_timer() -> bool:
    return (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    )


def _busy(timeout: float) -> LockTimeout:
    return LockTimeout(f"GPU busy with another timed run for {timeout:.0f} s")


def _acquire_blocking(fd: int, timeout: float) -> None:
    def expired(signum: int, frame: Any) -> None:
        raise _busy(timeout)

    previous = signal.signal(signal.SIGALRM, expired)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(timeout, 1e-3))
        fcntl.flock(fd, fcntl.LOCK_EX)
        signal.setitimer(signal.ITIMER_REAL, 0.0)
    except LockTimeout:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        fcntl.flock(fd, fcntl.LOCK_UN)  # the timer may have fired just after the lock came: let it go again
        raise
    finally:
        signal.signal(signal.SIGALRM, previous)


def _acquire_polling(fd: int, timeout: float, poll: float = 0.001) -> None:
    start = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() - start >= timeout:
                raise _busy(timeout) from None
            time.sleep(poll)


class GpuLock:
    """The per-GPU timing lock, opened from its path (for code that runs outside a sandbox)."""

    def __init__(self, uuid: str, directory: str | None = None):
        self.path = lock_path(uuid, directory)

    @contextmanager
    def hold(self, timeout: float = 60.0) -> Iterator[float]:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            with locked(fd, timeout) as waited:
                yield waited
        finally:
            os.close(fd)


@contextmanager
def timing_lock(uuid: str, timeout: float = 60.0) -> Iterator[float]:
    """The lock a timed measurement takes: the inherited descriptor if the worker gave one, else the file."""
    fd_text = os.environ.get(LOCK_FD_ENV)
    if fd_text and fd_text.isdigit():
        try:
            os.fstat(int(fd_text))
        except OSError:
            fd_text = None
        else:
            with locked(int(fd_text), timeout) as waited:
                yield waited
            return
    with GpuLock(uuid).hold(timeout) as waited:
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
