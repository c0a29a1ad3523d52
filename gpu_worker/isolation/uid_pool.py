"""A distinct uid for each job running at once on this host, so no job shares a per-user quota with another.

RLIMIT_NPROC counts every process of a uid: with one sandbox uid for all
jobs, a job that holds its process limit makes the next student's job fail.
A root worker therefore runs each job as `BASE + slot`, where the slot is
the first of `SLOTS` lock files under `LOCK_DIR` that no other job on this
host holds (an `flock`, released by the kernel even when a worker dies) and
that no live process still runs as. The engine leases the uid before the job
starts, reports it as the job's, and gives it back after the sandbox has
stopped every process of the job; the child never chooses or reports it.

A worker that is not root has one uid of its own; bwrap's user namespace maps
it to nobody and the job's cgroup (gpu_worker.isolation.cgroups) bounds its processes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

BASE = int(os.environ.get("WARPLAB_SANDBOX_UID_BASE", "60000"))
SLOTS = int(os.environ.get("WARPLAB_SANDBOX_UID_SLOTS", "256"))
LOCK_DIR = Path(os.environ.get("WARPLAB_SANDBOX_UID_LOCKS", "/run/warplab-sandbox-uids"))


class NoFreeUid(RuntimeError):
    """Every uid of the pool is in use on this host."""


@dataclass
class Lease:
    """One job's uid, held until `release`."""

    uid: int
    fd: int | None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the lock file's only descriptor drops the flock
            self.fd = None


def _running_uids() -> set[int]:
    uids: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                uids.add(entry.stat().st_uid)
    return uids


def _lock_dir() -> Path:
    LOCK_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    return LOCK_DIR


def lease() -> Lease:
    """The first free uid of the pool, locked for this job."""
    folder = _lock_dir()
    busy = _running_uids()
    for slot in range(SLOTS):
        uid = BASE + slot
        if uid in busy:  # a process of an earlier job still alive (it will be killed with its sandbox)
            continue
        fd = os.open(folder / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return Lease(uid, fd)
    raise NoFreeUid(f"all {SLOTS} sandbox uids from {BASE} are in use on this host")


def uid_range() -> range:
    return range(BASE, BASE + SLOTS)
