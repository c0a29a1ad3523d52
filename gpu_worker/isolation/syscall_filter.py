"""The seccomp filter every job runs under: no namespaces, mounts, io_uring, keyrings, ptrace, bpf or perf events.

The filter is built with libseccomp (through `pyseccomp`, a ctypes binding of
the system's libseccomp.so.2, which Debian and Ubuntu install with apt) and
handed to bubblewrap as `--seccomp FD`: bwrap loads it right before it
executes the job's first process, so everything of the job runs under it and
cannot lift it. libseccomp writes the architecture check (a syscall from
another ABI, such as 32-bit x86 on x86_64, kills the process) and resolves
the syscall numbers of this machine; no table of numbers is kept here.

Denied calls fail with EPERM, as on a kernel without the feature, so a
program that probes for them carries on. `clone3` fails with ENOSYS instead:
its flags are behind a pointer the filter cannot read, and glibc falls back to
`clone`, whose flags it can (threads and plain forks pass; any namespace flag
fails). Nothing here blocks what CUDA needs: ioctl and mmap on /dev/nvidia*.

Under a profiler (`profiler=True`: Nsight Compute in front of the child, see
`gpu_worker.profiling`) ptrace, perf_event_open and process_vm_* stay allowed,
as a profiler may use them; the learner's process there runs as the job's uid,
which owns no other process of the sandbox, and the host's perf_event_paranoid
still applies. (Not yet measured with ncu on the device.)
"""

from __future__ import annotations

import errno
import functools
import os
from typing import Any

DENIED = (
    # namespaces and mounts: no new user (or any) namespace, no mount table of its own
    "unshare",
    "setns",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    # io_uring (a second way to make every syscall), keyrings, other processes' memory and files
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    # the kernel's own: bpf programs, perf counters, modules, kexec, swap, clocks, reboot, logs
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "syslog",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "vhangup",
    "uselib",
    "nfsservctl",
    "_sysctl",
)
PROFILER_NEEDS = frozenset({"ptrace", "perf_event_open", "process_vm_readv", "process_vm_writev"})
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}


def _library() -> Any:
    """pyseccomp, which loads libseccomp.so.2 when imported (RuntimeError, ImportError or OSError without it)."""
    import ctypes.util

    real = ctypes.util.find_library

    def find(name: str) -> str | None:  # a library unpacked beside the image (LD_LIBRARY_PATH) is not in ldconfig's
        return real(name) or ("libseccomp.so.2" if name == "seccomp" else None)

    ctypes.util.find_library = find
    try:
        import pyseccomp
    finally:
        ctypes.util.find_library = real
    return pyseccomp


@functools.lru_cache(maxsize=2)
def program(profiler: bool = False) -> bytes | None:
    """The filter as a BPF program for bwrap, or None when libseccomp is not there (the sandbox then says so)."""
    try:
        seccomp = _library()
    except (ImportError, OSError, AttributeError, RuntimeError):
        return None
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED:
        if profiler and name in PROFILER_NEEDS:
            continue
        try:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):  # a syscall this architecture does not have
            continue
    for flag in NAMESPACE_FLAGS.values():
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    read_fd, write_fd = os.pipe()
    try:
        with os.fdopen(write_fd, "wb") as sink:
            rules.export_bpf(sink)
        with os.fdopen(read_fd, "rb") as source:
            read_fd = -1
            return source.read()
    finally:
        if read_fd >= 0:
            os.close(read_fd)


def program_fd(profiler: bool = False) -> int | None:
    """A new file descriptor holding the program from its start, for one bwrap (which reads it to the end)."""
    bpf = program(profiler)
    if bpf is None:
        return None
    fd = os.memfd_create("warplab-seccomp", os.MFD_CLOEXEC)
    os.write(fd, bpf)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def describe(profiler: bool = False) -> dict[str, Any]:
    """What the filter denies, for the job's sandbox description."""
    if program() is None:
        return {"seccomp": "none (libseccomp or pyseccomp is missing)"}
    if profiler:
        return {
            "seccomp": "denies namespaces, mount, io_uring, keyrings, bpf, modules, kexec; allows the profiler's "
            "ptrace, perf_event_open and process_vm_*"
        }
    return {
        "seccomp": "denies namespaces, mount, io_uring, keyrings, ptrace, process_vm_*, bpf, perf_event_open, "
        "modules, kexec (EPERM); clone3 (ENOSYS, glibc falls back to clone)"
    }
