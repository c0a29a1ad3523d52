"""A control group per job: memory (its /tmp and page cache included), processes and CPU, counted over the whole job.

rlimits are per process (four forked children of 2 GiB each are 8 GiB) and
RLIMIT_NPROC is per uid; a cgroup counts everything the job's processes
charge, tmpfs pages and page cache included, and a job can neither leave it
nor raise its limits (it runs as another uid, in its own cgroup namespace).

Where the worker may make one, in this order:
- cgroup v2 (`/sys/fs/cgroup/cgroup.controllers` exists): under
  `WARPLAB_CGROUP_PARENT` (a delegated cgroup, e.g. systemd's `Delegate=yes`)
  or else the worker's own cgroup, if memory and pids are, or can be, enabled
  in its `cgroup.subtree_control` (the kernel refuses that in a cgroup that
  holds processes, the worker's own cgroup included, unless it is the root);
- cgroup v1 (the memory, pids and cpu hierarchies mounted under
  `/sys/fs/cgroup/<controller>`, as in a hybrid container): a folder in each,
  under the worker's own cgroup there, and one in cpuacct where it is mounted
  apart (the job's CPU seconds: a PID namespace hides its processes from any
  count by process tree);
- neither: `available()` says None and the sandbox keeps only its rlimits
  (and says so in the job's sandbox description).

The job joins its cgroup between fork and exec (`join`, in the sandbox's
preexec), so bwrap and every process it starts are inside from the first
instruction. `remove` kills whatever is left and deletes the folders.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PARENT_ENV = "WARPLAB_CGROUP_PARENT"  # a delegated cgroup v2 folder (absolute, under /sys/fs/cgroup) for the jobs
DISABLE_ENV = "WARPLAB_CGROUPS"  # "0": use rlimits only
# cpuacct counts the job's CPU seconds (`cpu_seconds`) where it is mounted apart from cpu, as on the CI machine
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
V1_OPTIONAL = ("cpu", "cpuacct")  # without them CPU time is still bounded by RLIMIT_CPU, only not counted
CPU_PERIOD_US = 100_000
_names = itertools.count(1)


@dataclass(frozen=True)
class Where:
    """Where job cgroups can be made: the version and one parent folder per controller (v2: one for all)."""

    version: int
    parents: dict[str, Path]

    def describe(self) -> str:
        return f"cgroup v{self.version}"


def _own_paths() -> dict[str, str]:
    """Controller (or '' for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                paths[name] = path
    return paths


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def _v2_parent() -> Path | None:
    if not (ROOT / "cgroup.controllers").exists():
        return None
    own = _own_paths().get("")
    candidates = [Path(os.environ[PARENT_ENV])] if os.environ.get(PARENT_ENV) else []
    if own is not None:
        candidates.append(ROOT / own.lstrip("/"))
    for parent in candidates:
        if not _writable_dir(parent):
            continue
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if {"memory", "pids"} <= enabled:
            return parent
        available = set((parent / "cgroup.controllers").read_text().split())
        wanted = [c for c in ("memory", "pids", "cpu") if c in available and c not in enabled]
        try:
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
        except OSError:  # EBUSY: processes live in it; ENOENT/EPERM: not delegated
            continue
        return parent
    return None


def _v1_parents() -> dict[str, Path] | None:
    own = _own_paths()
    parents: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        mount = ROOT / controller
        parent = mount / own[controller].lstrip("/") if controller in own else None
        if parent is None or not (mount / "cgroup.procs").exists() or not _writable_dir(parent):
            if controller in V1_OPTIONAL:
                continue
            return None
        if any(parent.resolve() == chosen.resolve() for chosen in parents.values()):
            continue  # cpu and cpuacct mounted together ("cpu,cpuacct"): one folder serves both
        parents[controller] = parent
    return parents


@functools.lru_cache(maxsize=1)
def available() -> Where | None:
    """Where this worker can make job cgroups, probed once by making (and removing) one; None: it cannot."""
    if os.environ.get(DISABLE_ENV, "").strip() == "0":
        return None
    v2 = _v2_parent()
    where = Where(2, {"": v2}) if v2 is not None else None
    if where is None:
        v1 = _v1_parents()
        where = Where(1, v1) if v1 else None
    if where is None:
        return None
    _remove_stale(where)
    try:
        probe = JobCgroup.create(where, memory_bytes=64 << 20, pids=8, cpus=1.0)
    except OSError:
        return None
    probe.remove()
    return where


def _remove_stale(where: Where) -> None:
    """Folders of jobs whose worker died (SIGKILL: no `remove` ran), once their processes are gone too."""
    for parent in where.parents.values():
        for folder in parent.glob("warplab-job-*-*"):
            owner = folder.name.split("-")[2]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                with contextlib.suppress(OSError):  # still holds a process: left for a later start
                    folder.rmdir()


@dataclass
class JobCgroup:
    """One job's cgroup: a folder per hierarchy (one on v2)."""

    where: Where
    folders: list[Path]

    @classmethod
    def create(cls, where: Where, memory_bytes: int, pids: int, cpus: float) -> JobCgroup:
        name = f"warplab-job-{os.getpid()}-{next(_names)}"
        made: list[Path] = []
        try:
            for controller, parent in where.parents.items():
                folder = parent / name
                folder.mkdir()
                made.append(folder)
                _limit(where.version, controller, folder, memory_bytes, pids, cpus)
        except OSError:
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        return cls(where, made)

    def join(self) -> None:
        """Move the calling process in (between fork and exec: everything the job starts stays in)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text("0")

    def _read(self, *names: str) -> str:
        for folder in self.folders:
            for name in names:
                with contextlib.suppress(OSError):
                    return (folder / name).read_text()
        return ""

    def oom_kills(self) -> int:
        """How many of the job's processes the kernel killed for going over the memory limit."""
        text = self._read("memory.events", "memory.oom_control")
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def peak_memory_bytes(self) -> int | None:
        text = self._read("memory.peak", "memory.max_usage_in_bytes").strip()
        return int(text) if text.isdigit() else None

    def cpu_seconds(self) -> float | None:
        """CPU seconds the job's processes used, every one of them (a spare's warm-up too), while the folder
        lasts: v2's `cpu.stat` usage, or v1's `cpuacct.usage` where cpuacct shares the cpu hierarchy; None
        where neither is there. Unlike a process tree's reaped-children counts, a PID namespace loses none."""
        for line in self._read("cpu.stat").splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec" and value.strip().isdigit():
                return int(value) / 1e6
        text = self._read("cpuacct.usage").strip()
        return int(text) / 1e9 if text.isdigit() else None

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        return sorted(found)

    def remove(self) -> None:
        """Kill what is left of the job and delete its folders (a cgroup with processes cannot be removed)."""
        deadline = time.monotonic() + 5
        if self.where.version == 2:
            with contextlib.suppress(OSError):
                (self.folders[0] / "cgroup.kill").write_text("1")
        while True:
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            left = []
            for folder in self.folders:
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    pass
                except OSError:
                    left.append(folder)
            self.folders = left
            if not left or time.monotonic() > deadline:
                return
            time.sleep(0.01)


def _limit(version: int, controller: str, folder: Path, memory_bytes: int, pids: int, cpus: float) -> None:
    quota = max(1000, int(cpus * CPU_PERIOD_US))
    if version == 2:
        (folder / "memory.max").write_text(str(memory_bytes))
        with contextlib.suppress(OSError):  # no swap accounting on this kernel: nothing to limit
            (folder / "memory.swap.max").write_text("0")
        (folder / "pids.max").write_text(str(pids))
        with contextlib.suppress(OSError):  # the cpu controller may not be delegated; RLIMIT_CPU still holds
            (folder / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
    elif controller == "memory":
        (folder / "memory.limit_in_bytes").write_text(str(memory_bytes))
        with contextlib.suppress(OSError):  # only with swap accounting
            (folder / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
    elif controller == "pids":
        (folder / "pids.max").write_text(str(pids))
    elif controller == "cpu":
        (folder / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
        (folder / "cpu.cfs_quota_us").write_text(str(quota))
