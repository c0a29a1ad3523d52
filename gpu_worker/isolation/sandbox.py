"""Run one job's child process in a sandbox and talk to it over a private pipe.

Isolation, with bubblewrap (`bwrap`): new network, PID, IPC, UTS and cgroup
namespaces (no network at all, not even loopback; the job sees only its own
processes); a filesystem built from read-only binds of what Python, Numba and
the CUDA toolchain need (`/usr`, the interpreter and virtual environment, this
package) with a private `/tmp`, a stub `/etc/passwd` and nothing of `/root`,
`/home`, the repository's lab content or the host's `/etc`; an explicit, minimal
environment; rlimits on CPU time, address space, processes, file size and core
dumps; a wall-clock watchdog that kills the whole process group (the PID
namespace dies with it, taking every process of the job along).

Containment over the whole job, not per process: a cgroup of its own
(`gpu_worker.isolation.cgroups`: memory with its /tmp and page cache, processes, CPU)
where the worker may make one, a /tmp capped in size (bwrap's `--size`), and
a seccomp filter (`gpu_worker.isolation.syscall_filter`: no namespaces, mounts,
io_uring, keyrings, ptrace, bpf or perf events). The description says which
of these the job got (`containment`, `tmp_mb`, `seccomp`).

The job runs as a uid of its own. When the worker runs as root, a user
namespace would only relabel root (the kernel would still see uid 0: owner
access to root's files, and no RLIMIT_NPROC, from which root is exempt), so
bwrap runs without one and the child itself switches with setresuid, before
it reads anything the learner wrote, to the uid the caller leased for this
job from `gpu_worker.isolation.uid_pool` (60000 + a slot no other running job holds:
no job shares RLIMIT_NPROC with another). When the worker is an unprivileged
user, bwrap's user namespace maps it to 65534 (nobody), with
`--disable-userns` against nested user namespaces.

Without bwrap we fall back to `unshare` (network and PID namespaces, no
filesystem isolation) and say so in the sandbox description.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import json
import os
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_worker.isolation import cgroups, placement, syscall_filter, tree_cpu, uid_pool
from gpu_worker.isolation.wire import MessageReader
from gpu_worker.measurement import kernel_cache
from gpu_worker.protocol import Limits

NOBODY = 65534
PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded once here: a forked child about to exec must not dlopen
PACKAGE_DIR = Path(__file__).resolve().parents[1]
# NumPy's BLAS starts a thread per host core at import, and OpenBLAS's threads spin before they sleep: every
# process of a job (the child, the learner's compile process) paid for that before its first line. On the 16-core
# H100 host `import numpy` took 2.18 CPU seconds, 0.37 s with one thread; a spare's start fell from 1.30 to 0.28 s
# and the host's CPU per graded job from 4.24 to 2.80 s (docs/benchmarks.md, run 28, call 4). A job's checks on
# the host are small (a GPU job's are computed on the GPU), and a job is one core's worth of the host's CPU.
ONE_THREAD_BLAS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
PASSED_THROUGH = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_MPS_PIPE_DIRECTORY",
    "CUDA_MPS_LOG_DIRECTORY",
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
    "NVIDIA_VISIBLE_DEVICES",
    "WARPLAB_CHECKS_BESIDE_TIMINGS",  # a benchmark's before-and-after switch (gpu_lock.CHECKS_BESIDE_TIMINGS_ENV)
    "WARPLAB_CHECKS_ALONE",  # another (gpu_lock.CHECKS_ALONE_ENV)
    "WARPLAB_CHILD_PROFILE",  # a benchmark's: the child's own profile in the job's output (child.PROFILE_ENV)
)
EXTRA_BINDS_ENV = "WARPLAB_SANDBOX_BINDS"  # colon-separated extra read-only paths (a toolkit outside /usr)
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")


@dataclass
class SandboxRun:
    """What came out of one sandboxed child."""

    returncode: int | None
    timed_out: bool
    wall_seconds: float
    output: str
    output_truncated: bool
    info: dict[str, Any]
    oom_kills: int = 0  # processes of the job the kernel killed at its cgroup's memory limit


@dataclass
class _Plan:
    argv: list[str]
    env: dict[str, str]
    info: dict[str, Any]
    drop_uid: int | None
    limits: list[tuple[int, int]] = field(default_factory=list)
    cgroup: dict[str, int | float] | None = None  # the job cgroup's limits, made at start
    seccomp: bool = False  # whether argv holds `--seccomp SECCOMP_FD`, to be replaced by a fresh fd at start
    profiler: bool = False  # a profiler runs in front of the child (its filter allows ptrace and perf events)


def _toolkit_root() -> Path | None:
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc is None:
        return None
    # /usr/local/bin/nvcc may be a wrapper script; the toolkit proper is what /usr/local/cuda points at
    for candidate in (Path("/usr/local/cuda"), Path(os.path.realpath(nvcc)).parent.parent):
        if (candidate / "bin" / "nvcc").exists() and (candidate / "nvvm").exists():
            return candidate.resolve()
    return None


@functools.lru_cache(maxsize=1)
def _stub_etc() -> Path:
    """A passwd and group that name only nobody, bound over the host's (which list real users)."""
    folder = Path(tempfile.mkdtemp(prefix="warplab-etc-"))
    folder.chmod(0o755)
    jobs = "".join(f"job{u}:x:{u}:{u}:job:/tmp:/usr/sbin/nologin\n" for u in uid_pool.uid_range())
    (folder / "passwd").write_text(f"nobody:x:{NOBODY}:{NOBODY}:nobody:/tmp:/usr/sbin/nologin\n{jobs}")
    (folder / "group").write_text(f"nogroup:x:{NOBODY}:\n")
    for f in folder.iterdir():
        f.chmod(0o644)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _read_only_paths(extra: Sequence[Path] = ()) -> list[Path]:
    """Python, the venv, this package, a toolkit that lives outside /usr, and `extra` (a profiler's folder)."""
    paths = [Path(sys.base_prefix), Path(sys.prefix), PACKAGE_DIR]
    toolkit = _toolkit_root()
    if toolkit is not None:
        paths.append(toolkit)
    paths += [Path(p) for p in os.environ.get(EXTRA_BINDS_ENV, "").split(":") if p]
    paths += list(extra)
    unique: list[Path] = []
    for p in sorted({p.resolve() for p in paths if p.exists()}, key=lambda p: len(p.parts)):
        if p == Path("/usr") or Path("/usr") in p.parents or any(u in p.parents for u in unique):
            continue
        unique.append(p)
    return unique


CUDA_HOST_MEMORY_MB = 16384  # a GPU job's host memory: CUDA's libraries, pinned buffers and host copies of sizes
SECCOMP_FD = "SECCOMP_FD"  # placeholder in a plan's argv for the filter's fd, made afresh for every start


def _bwrap_args(
    backend: str,
    root_mode: bool,
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    wrapped: bool = False,
    tmp_bytes: int | None = None,
    seccomp: bool = False,
) -> list[str]:
    args = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if root_mode:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # only to drop to the job's uid, then gone
    else:
        args += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
        if _bwrap_has("--disable-userns"):
            args += ["--disable-userns"]
    if seccomp:
        args += ["--seccomp", SECCOMP_FD]
    args += ["--die-with-parent", "--new-session", "--hostname", "warplab"]
    args += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "sbin", "lib32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    stub = _stub_etc()
    args += ["--ro-bind", str(stub / "passwd"), "/etc/passwd", "--ro-bind", str(stub / "group"), "/etc/group"]
    size = ["--size", str(tmp_bytes)] if tmp_bytes is not None else []
    args += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", *size, "--tmpfs", "/tmp"]
    if wrapped:  # a profiler in front of the child, or NCCL's ranks, share memory through /dev/shm
        args += ["--perms", "1777", *size, "--tmpfs", "/dev/shm"]
    made = {Path("/"), Path("/etc"), Path("/tmp"), Path("/usr")}
    binds = [("--ro-bind", p) for p in _read_only_paths(read_only)] + [("--bind", Path(p)) for p in writable]
    for how, path in binds:
        for parent in reversed(path.parents):
            if parent not in made:  # bwrap would make missing parents 0700, unreadable for nobody
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        args += [how, str(path), str(path)]
        made.add(path)
    if backend == "cuda":
        for dev in sorted(Path("/dev").glob("nvidia*")):
            args += ["--dev-bind", str(dev), str(dev)]
        args += ["--ro-bind-try", "/sys", "/sys"]
        mps = os.environ.get("CUDA_MPS_PIPE_DIRECTORY")
        if mps:
            args += ["--bind-try", mps, mps]
    args += ["--chdir", "/tmp"]
    return args


def _environment(backend: str) -> dict[str, str]:
    """An explicit environment: nothing of the worker's (broker URL, secrets) but CUDA's slice variables."""
    toolkit = _toolkit_root()
    path = ["/usr/local/bin", "/usr/bin", "/bin"]
    if toolkit is not None:
        path.insert(0, str(toolkit / "bin"))
    env = {
        "PATH": ":".join(path),
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(PACKAGE_DIR.parent),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONNOUSERSITE": "1",
        "NUMBA_CACHE_DIR": "/tmp/numba-cache",
        "CUDA_CACHE_PATH": "/tmp/cuda-cache",
        **ONE_THREAD_BLAS,
    }
    if toolkit is not None:
        env["CUDA_HOME"] = str(toolkit)
    if backend == "sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env[kernel_cache.SEED_ENV] = str(kernel_cache.seed_dir())
    for name in PASSED_THROUGH:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _rlimits(backend: str, limits: Limits, extra_processes: int) -> tuple[list[tuple[int, int]], dict[str, Any]]:
    cpu = int(limits.cpu_seconds)
    chosen = [
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_NPROC, limits.processes + extra_processes),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_CORE, 0),
    ]
    described: dict[str, Any] = {
        "cpu_seconds": cpu,
        "processes": limits.processes + extra_processes,
        "file_bytes": limits.file_bytes,
        "output_bytes": limits.output_bytes,
        "wall_seconds": limits.wall_seconds,
    }
    if backend == "sim":
        chosen.append((resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024))
        described["memory_mb"] = limits.memory_mb
    else:
        described["memory_mb"] = "unlimited address space (CUDA maps the GPU's memory into it)"
    return chosen, described


def die_with_parent() -> None:
    """This process gets SIGKILL when the thread that started it ends (PR_SET_PDEATHSIG); gone at once if it has."""
    parent = os.getppid()
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


def _enter_limits(chosen: list[tuple[int, int]], cgroup: cgroups.JobCgroup | None) -> None:
    """In the forked child, before exec: into the job's cgroup, under its rlimits."""
    die_with_parent()  # bwrap's --die-with-parent does the same; the unshare fallback needs it here
    if cgroup is not None:
        cgroup.join()
    for which, value in chosen:
        resource.setrlimit(which, (value, value))


def everyone_can_read(path: Path) -> bool:
    """Whether a user with no rights of its own can reach `path` (every folder above it searchable by others)."""
    path = path.resolve()
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in [path, *path.parents]) and bool(
        os.stat(path).st_mode & stat.S_IROTH
    )


def find_bwrap() -> str | None:
    """bubblewrap on PATH; without it the sandbox falls back to `unshare`."""
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=4)
def _bwrap_version(bwrap: str) -> str:
    words = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.split()
    return words[-1] if words else ""


@functools.lru_cache(maxsize=8)
def _bwrap_has(option: str) -> bool:
    """Whether this bwrap knows `option` (`--size` came with 0.9, and with Debian's 0.8.0)."""
    bwrap = find_bwrap()
    if bwrap is None:
        return False
    shown = subprocess.run([bwrap, "--help"], capture_output=True, text=True)
    return f"{option} " in shown.stdout + shown.stderr


def _containment(backend: str, limits: Limits, extra_processes: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """What bounds the whole job (a cgroup, or only rlimits) in words, and the cgroup's limits if there is one."""
    memory_mb = max(limits.memory_mb, CUDA_HOST_MEMORY_MB) if backend == "cuda" else limits.memory_mb
    where = cgroups.available()
    if where is None:
        return {"containment": "rlimits only (no cgroup this worker may create)"}, None
    wanted = {"memory_bytes": memory_mb * 1024 * 1024, "pids": limits.processes + extra_processes, "cpus": limits.cpus}
    described = {
        "containment": f"{where.describe()} per job",
        "cgroup": {"memory_mb": memory_mb, "pids": wanted["pids"], "cpus": limits.cpus, "counts": "all, and /tmp"},
    }
    return described, wanted


def plan(
    backend: str,
    limits: Limits,
    child_args: list[str],
    extra_processes: int = 0,
    info_fd: int | None = None,
    *,
    wrapper: Sequence[str] = (),
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    uid: int | None = None,
    child_module: str = "gpu_worker.isolation.child",
) -> _Plan:
    """The command line, environment, rlimits and description of the sandbox for one job.

    `wrapper` is a command the child runs under (a profiler: `ncu ...`), started
    in the sandbox as the sandbox's first user, before the child drops to nobody;
    `read_only` and `writable` are host folders it needs, bound at the same paths;
    `uid` is the job's, when the caller has leased it already (the description names it);
    `child_module` is the child's entry point (a scheduling policy has its own).
    """
    root_mode = os.geteuid() == 0
    several = backend == "cuda" and limits.gpus > 1  # NCCL ranks: their threads, /dev/shm and environment
    extra_processes += placement.extra_threads(limits.gpus) if several else 0
    chosen, described = _rlimits(backend, limits, extra_processes)
    contained, cgroup_limits = _containment(backend, limits, extra_processes)
    seed = kernel_cache.seed_dir()
    if backend == "cuda" and seed.is_dir():
        read_only = (*read_only, seed)  # the harness's compiled kernels, copied into the job's own cache
    command = [*wrapper, sys.executable, "-m", child_module, *child_args]
    job_uid = (uid if uid is not None else NOBODY) if root_mode else NOBODY
    info: dict[str, Any] = {"network": False, "uid": job_uid, "environment": "scrubbed", "limits": described}
    info |= contained
    bwrap = find_bwrap()
    seccomp = False
    if bwrap:
        seccomp = syscall_filter.program() is not None
        tmp_bytes = limits.tmp_mb * 1024 * 1024 if _bwrap_has("--size") else None
        info |= {
            "tool": "bwrap",
            "version": _bwrap_version(bwrap),
            "namespaces": ["net", "pid", "ipc", "uts", "cgroup"] + ([] if root_mode else ["user"]),
            "filesystem": "read-only system, Python and toolchain; private /tmp; no home, /root or host /etc",
            "uid_switch": "setresuid in the child (worker runs as root)" if root_mode else "user namespace",
            "tmp_mb": limits.tmp_mb if tmp_bytes is not None else "uncapped (this bwrap has no --size)",
            "user_namespaces": "denied by seccomp" if root_mode else "--disable-userns and seccomp",
            **syscall_filter.describe(profiler=bool(wrapper)),
        }
        info_args = ["--info-fd", str(info_fd)] if info_fd is not None else []
        sandbox_args = _bwrap_args(
            backend,
            root_mode,
            read_only,
            writable,
            wrapped=bool(wrapper) or several,
            tmp_bytes=tmp_bytes,
            seccomp=seccomp,
        )
        argv = [bwrap, *sandbox_args, *info_args, "--", *command]
    elif shutil.which("unshare"):
        hidden = [str(p) for p in (Path(sys.base_prefix), Path(sys.prefix), PACKAGE_DIR) if not everyone_can_read(p)]
        if root_mode and hidden:
            raise RuntimeError(
                "no usable sandbox: bwrap is not installed, and without it the job's user (65534) cannot read "
                f"{', '.join(hidden)}; install bubblewrap"
            )
        flags = ["--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--ipc", "--uts"]
        if not root_mode:
            flags = ["--user", "--map-root-user", *flags]
            info["uid"] = os.getuid()
        info |= {
            "tool": "unshare",
            "namespaces": ["net", "pid", "ipc", "uts", "mount"] + ([] if root_mode else ["user"]),
            "filesystem": "host filesystem (bwrap is missing: no filesystem isolation)",
            "warning": "bwrap is not installed; only the network and processes are isolated",
        }
        argv = [shutil.which("unshare") or "unshare", *flags, "--", *command]
    else:
        raise RuntimeError("no sandbox available: install bubblewrap (bwrap)")
    if wrapper:
        info["wrapped_by"] = os.path.basename(wrapper[0])
    env = _environment(backend)
    if backend == "cuda":  # CuPy's memory pool stops there; set by us, before any learner's code runs
        env["CUPY_GPU_MEMORY_LIMIT"] = str(limits.gpu_memory_mb * 1024 * 1024)
        info["gpu_memory_mb"] = limits.gpu_memory_mb
    if several:
        from gpu_worker.settings import WorkerSettings

        owned = placement.worker_gpus(declared=WorkerSettings().gpus)
        env |= placement.job_environment(limits.gpus, owned)
        info["gpus"] = env["CUDA_VISIBLE_DEVICES"]
    return _Plan(argv, env, info, NOBODY if root_mode else None, chosen, cgroup_limits, seccomp, bool(wrapper))


def describe(backend: str, limits: Limits, extra_processes: int = 0, uid: int | None = None) -> dict[str, Any]:
    """The isolation a job would get (as `uid`, when leased), for the `started` event and `result.sandbox`."""
    return plan(backend, limits, [], extra_processes, uid=uid).info


class _Session:
    """One running sandbox: its pipes, its output, and how to stop it completely."""

    def __init__(self, the_plan: _Plan, fds: list[int], payload: bytes):
        self.cgroup: cgroups.JobCgroup | None = None
        where = cgroups.available() if the_plan.cgroup is not None else None
        if where is not None and the_plan.cgroup is not None:
            self.cgroup = cgroups.JobCgroup.create(
                where, int(the_plan.cgroup["memory_bytes"]), int(the_plan.cgroup["pids"]), the_plan.cgroup["cpus"]
            )
        argv, filter_fd = the_plan.argv, None
        if the_plan.seccomp:
            filter_fd = syscall_filter.program_fd(the_plan.profiler)
            argv = [str(filter_fd) if a == SECCOMP_FD else a for a in argv]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=the_plan.env,
                pass_fds=[*fds, *([filter_fd] if filter_fd is not None else [])],
                start_new_session=True,
                preexec_fn=functools.partial(_enter_limits, the_plan.limits, self.cgroup),
            )
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.remove()
            raise
        finally:
            if filter_fd is not None:
                os.close(filter_fd)
        self.payload = memoryview(payload)
        self.output = bytearray()
        self.truncated = False
        self.info_text = b""
        self.namespace_init: int | None = None  # a pidfd for bwrap's PID 1 in the job's namespace

    def read_info(self, chunk: bytes) -> None:
        self.info_text += chunk
        if self.namespace_init is not None:
            return
        with contextlib.suppress(ValueError, KeyError, TypeError):  # not all of it has arrived yet
            pid = int(json.loads(self.info_text)["child-pid"])
            with contextlib.suppress(OSError):  # a pidfd names this very process, even after its pid is reused
                self.namespace_init = os.pidfd_open(pid)

    def keep_output(self, chunk: bytes, cap: int) -> None:
        room = cap - len(self.output)
        if len(chunk) > room:  # keep reading and dropping, so the child never blocks on a full pipe
            self.truncated = True
        self.output += chunk[: max(room, 0)]

    def stop(self, grace: float) -> None:
        """Let the job end by itself for `grace` seconds, then kill it and wait until every process is gone.

        bwrap returns as soon as the job's first process ends, while others may
        live on in the namespace. Killing the namespace's PID 1 makes the kernel
        kill and reap all of them before PID 1 itself is gone, so once its
        pidfd reports the exit, nothing of the job is left.
        """
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace)
        if self.namespace_init is not None:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self.namespace_init, signal.SIGKILL)
            with selectors.DefaultSelector() as exited:
                exited.register(self.namespace_init, selectors.EVENT_READ)
                exited.select(timeout=10)
            os.close(self.namespace_init)
            self.namespace_init = None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        if self.cgroup is not None:  # the job's facts, then nothing of it left: processes, folders
            self.oom_kills = self.cgroup.oom_kills()
            self.peak_memory = self.cgroup.peak_memory_bytes()
            if (counted := self.cgroup.cpu_seconds()) is not None:
                self.cpu_seconds, self.cpu_counted_by = counted, "cgroup"
            self.cgroup.remove()
            self.cgroup = None

    def cpu_so_far(self) -> tuple[float | None, str]:
        """The job's CPU seconds until now and what counted them: its cgroup, else its living process tree
        (`tree_cpu`), read while every process is still alive to be read."""
        if self.cgroup is not None and (counted := self.cgroup.cpu_seconds()) is not None:
            return counted, "cgroup"
        return tree_cpu.cpu_seconds(self.proc.pid), "processes at the final message"

    def count_cpu_at_final(self) -> None:
        """The job's CPU seconds at its final message, for a verdict reported there (`stop` reads a cgroup's
        whole count later, teardown included)."""
        self.cpu_seconds, self.cpu_counted_by = self.cpu_so_far()

    oom_kills = 0
    peak_memory: int | None = None
    cpu_seconds: float | None = None
    cpu_counted_by = ""
    warm_up_cpu_seconds: float | None = None  # a spare's, at the hand-over (imports, CUDA context, rehearsal)


@dataclass
class Started:
    """A child started in its sandbox, waiting for its request on `req_w`."""

    plan: _Plan
    session: _Session
    req_w: int
    msg_r: int
    info_r: int


def start(
    backend: str,
    limits: Limits,
    extra_processes: int = 0,
    inherit_fds: tuple[int, ...] = (),
    spare_cpu_allowance: int | None = None,
    *,
    spare_compiler: bool = True,
    spare_rehearsal: str | None = None,
    wrapper: Sequence[str] = (),
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    child_module: str = "gpu_worker.isolation.child",
) -> Started:
    """Start a child in its sandbox; it reads its request from the returned pipe.

    With `spare_cpu_allowance` the child is a spare: it imports its backend,
    says `ready`, and lowers its CPU limit to what it used plus the job's
    (RLIMIT_CPU at start is the job's plus the allowance, for the imports); `spare_compiler=False`: it
    starts no warm compile process (`spare.wants_compiler`); `spare_rehearsal` (`backends.rehearsal.describe`):
    the check it rehearses while it waits, on a GPU.
    `wrapper`, `read_only`, `writable` and `child_module` are `plan`'s.
    """
    req_r, req_w = os.pipe()
    msg_r, msg_w = os.pipe()
    info_r, info_w = os.pipe()
    child_args = [str(req_r), str(msg_w)]
    if spare_cpu_allowance is not None:
        child_args += ["--spare", backend, str(int(limits.cpu_seconds))]
        child_args += [] if spare_compiler else ["no-compiler"]
        child_args += [f"rehearse={spare_rehearsal}"] if spare_rehearsal else []
    the_plan = plan(
        backend,
        limits,
        child_args,
        extra_processes,
        info_fd=info_w,
        wrapper=wrapper,
        read_only=read_only,
        writable=writable,
        child_module=child_module,
    )
    if spare_cpu_allowance is not None:
        the_plan.limits = [
            (which, value + spare_cpu_allowance if which == resource.RLIMIT_CPU else value)
            for which, value in the_plan.limits
        ]
    try:
        session = _Session(the_plan, [req_r, msg_w, info_w, *inherit_fds], b"")
    finally:
        for fd in (req_r, msg_w, info_w):
            os.close(fd)
    return Started(the_plan, session, req_w, msg_r, info_r)


FINAL_GRACE_S = 1.0  # after the final message, how long the job has to end before it is killed

# A benchmark's switch, off unless "1": a job left at its final message (`leave_at_final`) ends behind its
# worker's back, so the worker takes its next job while the driver tears the last one's CUDA context down.
TEARDOWN_BEHIND_ENV = "WARPLAB_TEARDOWN_BEHIND"


def teardown_behind() -> bool:
    """Whether jobs whose verdict is told at their final message end on a thread of their own (the switch)."""
    return os.environ.get(TEARDOWN_BEHIND_ENV, "").strip() == "1"


_ending = threading.local()  # this thread's sandboxes still ending behind it: their teardown threads


def when_ended(action: Callable[[], None]) -> None:
    """`action()` once every sandbox this thread left at its final message has ended (at once when none has):
    what must outlive the job's processes, its uid's lease, waits for them."""
    pending = [t for t in getattr(_ending, "threads", []) if t.is_alive()]
    _ending.threads = pending
    if not pending:
        action()
        return

    def wait_then_act() -> None:
        for thread in pending:
            thread.join()
        action()

    threading.Thread(target=wait_then_act, name="sandbox-ended", daemon=True).start()


def _end_behind(session: Any, grace: float, fds: list[int], info_r: int | None, out: Any) -> None:
    """Stop the job on a thread of its own (`leave_at_final`): its info (bwrap's PID 1), its end or its kill
    after `grace`, every process reaped, its cgroup removed, its pipes closed."""

    def end() -> None:
        try:
            with contextlib.suppress(OSError):  # bwrap's report names the namespace's PID 1, to kill them all
                while info_r is not None and (chunk := os.read(info_r, 4096)):
                    session.read_info(chunk)
            session.stop(grace=grace)
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            out.close()

    thread = threading.Thread(target=end, name="sandbox-teardown", daemon=True)
    thread.start()
    _ending.threads = [*getattr(_ending, "threads", []), thread]


def run_sandboxed(
    request: dict[str, Any],
    limits: Limits,
    backend: str,
    on_message: Callable[[dict[str, Any]], None],
    *,
    extra_processes: int = 0,
    max_message_bytes: int = 64 * 1024 * 1024,
    final_types: frozenset[str] = frozenset(),
    inherit_fds: tuple[int, ...] = (),  # e.g. the per-GPU timing lock (gpu_lock.py), kept open by the caller
    grace_seconds: float = FINAL_GRACE_S,
    spare: Started | None = None,  # a child started earlier (gpu_worker.isolation.spare) that waits for this request
    wrapper: Sequence[str] = (),  # a profiler the child runs under (gpu_worker.profiling); see `plan`
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    uid: int | None = None,  # the job's uid, leased by the caller (gpu_worker.isolation.uid_pool); None: leased here
    child_module: str = "gpu_worker.isolation.child",  # see `plan`
    on_final: Callable[[SandboxRun], None] | None = None,
    leave_at_final: bool = False,
) -> SandboxRun:
    """Start the child, send it `request`, pass each message to `on_message`, stop it at the wall limit.

    `on_message` runs in this process as messages arrive; an exception from it
    stops the child and propagates. After a message whose type is in
    `final_types` the job has `grace_seconds` to end before it is killed (a
    learner's leftover background process must not hold the result back); `on_final`, when given, is told
    then what is known of the run (its output so far, no exit status yet) while the grace goes on.
    Without `spare` the child is started here (a cold start). A root worker's
    child switches to `uid` (see `gpu_worker.isolation.uid_pool`), never one it chose.
    With `leave_at_final` (`teardown_behind`, for a caller that told the verdict at the final message) this
    returns at that message, with no exit status: the grace, the kill and the reaping go on on a thread of
    their own, and a uid leased here is released once they are over (`when_ended`, which a caller holding
    the job's uid uses too).
    """
    lease = uid_pool.lease() if uid is None and os.geteuid() == 0 else None
    try:
        return _run(
            request, limits, backend, on_message, extra_processes, max_message_bytes, final_types,
            inherit_fds, grace_seconds, spare, wrapper, read_only, writable,
            uid if lease is None else lease.uid, child_module, on_final, leave_at_final,
        )  # fmt: skip
    finally:
        if lease is not None:
            when_ended(lease.release)


def _run(
    request: dict[str, Any],
    limits: Limits,
    backend: str,
    on_message: Callable[[dict[str, Any]], None],
    extra_processes: int,
    max_message_bytes: int,
    final_types: frozenset[str],
    inherit_fds: tuple[int, ...],
    grace_seconds: float,
    spare: Started | None,
    wrapper: Sequence[str],
    read_only: Sequence[Path],
    writable: Sequence[Path],
    uid: int | None,
    child_module: str,
    on_final: Callable[[SandboxRun], None] | None,
    leave_at_final: bool = False,
) -> SandboxRun:
    started = time.monotonic()
    warm_up_pending = spare is not None  # a spare's warm-up CPU, counted once its job has the request
    if spare is None:
        spare = start(
            backend,
            limits,
            extra_processes,
            inherit_fds,
            wrapper=wrapper,
            read_only=read_only,
            writable=writable,
            child_module=child_module,
        )
    else:
        started = time.monotonic()  # the hand-over: a spare's wall clock counts from here, not from its start
    the_plan, session, req_w, msg_r, info_r = spare.plan, spare.session, spare.req_w, spare.msg_r, spare.info_r
    job_uid = uid if the_plan.drop_uid is not None and uid is not None else the_plan.drop_uid
    request = {**request, "drop_uid": job_uid, "drop_gid": job_uid}
    session.payload = memoryview(json.dumps(request).encode())
    assert session.proc.stdout is not None
    out_fd = session.proc.stdout.fileno()
    reader = MessageReader(max_message_bytes)
    selector = selectors.DefaultSelector()
    for fd, kind, events in (
        (out_fd, "out", selectors.EVENT_READ),
        (msg_r, "msg", selectors.EVENT_READ),
        (info_r, "info", selectors.EVENT_READ),
        (req_w, "req", selectors.EVENT_WRITE),
    ):
        os.set_blocking(fd, False)
        selector.register(fd, events, kind)
    deadline = started + limits.wall_seconds
    timed_out = final_seen = leaving = False
    try:
        while set(selector.get_map()) - {req_w, info_r} and not leaving:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = not final_seen
                break
            for key, _ in selector.select(timeout=min(remaining, 1.0)):
                if key.data == "req":
                    try:
                        session.payload = session.payload[os.write(key.fd, session.payload) :]
                    except BrokenPipeError:
                        session.payload = session.payload[:0]
                    if not session.payload:
                        selector.unregister(key.fd)
                        os.close(key.fd)
                        if warm_up_pending:  # a spare's warm-up, counted while its job reads the request
                            session.warm_up_cpu_seconds, warm_up_pending = session.cpu_so_far()[0], False
                    continue
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(key.fd)
                    if key.fd != out_fd:
                        os.close(key.fd)
                elif key.data == "out":
                    session.keep_output(chunk, limits.output_bytes)
                elif key.data == "info":
                    session.read_info(chunk)
                else:
                    for message in reader.feed(chunk):
                        on_message(message)
                        if message["type"] in final_types and not final_seen:
                            final_seen = True
                            session.count_cpu_at_final()
                            deadline = min(deadline, time.monotonic() + grace_seconds)
                            if on_final is not None or leave_at_final:
                                so_far = _so_far(session, out_fd, limits.output_bytes, started, the_plan, job_uid)
                            if on_final is not None:
                                on_final(so_far)
                            if leave_at_final:
                                leaving = True
                                break
    finally:
        grace = 0 if timed_out else max(0.0, min(grace_seconds, deadline - time.monotonic()))
        fds = [key.fd for key in selector.get_map().values() if key.fd != out_fd]  # still open
        selector.close()
        if leaving:  # the verdict is told: the rest of the job's end goes on behind the caller
            _end_behind(session, grace, fds, info_r if info_r in fds else None, session.proc.stdout)
        else:
            session.stop(grace=grace)
            for fd in fds:
                os.close(fd)
            session.proc.stdout.close()
    if leaving:
        return so_far
    return SandboxRun(
        returncode=session.proc.returncode,
        timed_out=timed_out,
        wall_seconds=time.monotonic() - started,
        output=session.output.decode("utf-8", errors="replace"),
        output_truncated=session.truncated,
        info=_info(session, the_plan, job_uid),
        oom_kills=session.oom_kills,
    )


def _info(session: Any, the_plan: Any, job_uid: int | None) -> dict[str, Any]:
    """The sandbox's description with what it counted of the job so far: its uid, peak memory, CPU seconds."""
    info = {**the_plan.info, "uid": job_uid if job_uid is not None else the_plan.info["uid"]}
    if session.peak_memory is not None:
        info["memory_peak_mb"] = round(session.peak_memory / 2**20, 1)
    if session.cpu_seconds is not None:
        info["cpu_seconds"] = round(session.cpu_seconds, 3)
        info["cpu_counted_by"] = session.cpu_counted_by
    if session.warm_up_cpu_seconds is not None:
        info["warm_up_cpu_seconds"] = round(session.warm_up_cpu_seconds, 3)
    return info


def _so_far(session: Any, out_fd: int, cap: int, started: float, the_plan: Any, job_uid: int | None) -> SandboxRun:
    """The run as known at its final message: the output written before it (read now), no exit status yet."""
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(out_fd, 1 << 16):
            session.keep_output(chunk, cap)
    return SandboxRun(
        returncode=None,
        timed_out=False,
        wall_seconds=time.monotonic() - started,
        output=session.output.decode("utf-8", errors="replace"),
        output_truncated=session.truncated,
        info=_info(session, the_plan, job_uid),
    )
