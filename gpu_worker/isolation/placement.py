"""Which of this worker's GPUs a job gets, and what a job that uses several needs inside its sandbox.

An exercise says how many GPUs one run needs in `lab.yaml` (`limits.gpus`,
default 1; more than one only with a `pool` whose workers own that many). A
worker owns the GPUs in its CUDA_VISIBLE_DEVICES (or `WARPLAB_GPUS` of them);
a job that needs more than the worker owns is refused with the reason: a
routing mistake, never the learner's. A job with several GPUs gets the
worker's first N, NCCL set up for the sandbox (no network namespace to reach:
bootstrap on loopback, InfiniBand and the socket transport's other interfaces
off, so ranks talk through NVLink/P2P and shared memory only), a private
/dev/shm for NCCL's shared-memory transport, and room for every rank's
threads under the process limit. Every rank is a process in the job's PID
namespace, so the watchdog that kills the sandbox at the wall limit kills
them all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

THREADS_PER_RANK = 64  # CUDA and NCCL start a dozen or more threads per process; RLIMIT_NPROC counts threads
MAX_JOB_GPUS = 8  # one NVLink domain of an HGX node

NCCL_SANDBOX_ENV = {
    "NCCL_SOCKET_IFNAME": "lo",  # the sandbox's network namespace has only loopback: bootstrap there
    "NCCL_IB_DISABLE": "1",  # no InfiniBand from a learner's job
    "NCCL_DEBUG": "WARN",
}


def worker_gpus(environ: Mapping[str, str] | None = None, declared: int = 1) -> list[str]:
    """The GPUs this worker owns: its CUDA_VISIBLE_DEVICES entries, else device ordinals 0 .. declared - 1."""
    env = os.environ if environ is None else environ
    visible = [d.strip() for d in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return visible or [str(i) for i in range(max(1, declared))]


def refusal(needed: int, backend: str, owned: int) -> str | None:
    """Why this worker cannot run a job needing `needed` GPUs, or None when it can."""
    if needed <= 1:
        return None
    if backend == "sim":
        return (
            f"This exercise needs {needed} GPUs and the simulator runs one kernel on the CPU; "
            "it runs on a GPU worker of its pool."
        )
    if needed > owned:
        return (
            f"This exercise needs {needed} GPUs and this worker owns {owned}: its pool is served by the wrong "
            "workers (set WARPLAB_GPUS and CUDA_VISIBLE_DEVICES on them). Nothing of your code ran."
        )
    return None


def job_environment(needed: int, owned: list[str]) -> dict[str, str]:
    """Environment added to a job's sandbox: its GPUs and, for more than one, NCCL's settings."""
    if needed <= 1:
        return {}
    return {"CUDA_VISIBLE_DEVICES": ",".join(owned[:needed]), **NCCL_SANDBOX_ENV}


def extra_threads(needed: int) -> int:
    """Processes (threads) to allow beyond the job's limit for its other ranks."""
    return THREADS_PER_RANK * max(0, needed - 1)
