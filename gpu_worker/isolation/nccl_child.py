"""A sandboxed child that checks NCCL works inside a job's sandbox: one all-reduce over every GPU it sees.

    python -m gpu_worker.isolation.nccl_child REQUEST_FD MESSAGE_FD      (started by `probe`, never by hand)

The worker side, `probe(gpus)`, starts it through `gpu_worker.isolation.sandbox` with
`Limits(gpus=...)`, so it gets what a multi-GPU job gets (gpu_worker.isolation.placement):
its GPUs, NCCL bootstrapping on loopback in a namespace with no network, a
private /dev/shm. The child drives every visible GPU from one process
(CuPy's ncclCommInitAll and grouped calls), all-reduces `size` bytes of float32
filled with rank + 1, checks the sum n (n + 1) / 2 on every rank, and times
`iters` more. It sends `nccl` (facts or the error) and `done`.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from gpu_worker.protocol import Limits


def _all_reduce(size: int, iters: int) -> dict[str, Any]:
    import cupy
    from cupy.cuda import nccl

    n = cupy.cuda.runtime.getDeviceCount()
    count = max(1, size // 4)
    comms = nccl.NcclCommunicator.initAll(n)
    bufs, streams = [], []
    for d in range(n):
        with cupy.cuda.Device(d):
            bufs.append(cupy.full(count, d + 1, dtype=cupy.float32))
            streams.append(cupy.cuda.Stream(non_blocking=True))

    def once() -> None:
        nccl.groupStart()
        for d in range(n):
            comms[d].allReduce(
                bufs[d].data.ptr, bufs[d].data.ptr, count, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, streams[d].ptr
            )
        nccl.groupEnd()
        for s in streams:
            s.synchronize()

    once()
    wrong = 0
    for d in range(n):
        with cupy.cuda.Device(d):
            wrong += int(cupy.count_nonzero(bufs[d] != n * (n + 1) / 2))
    start = time.perf_counter()
    for _ in range(iters):
        once()
    seconds = (time.perf_counter() - start) / max(1, iters)
    return {"n": n, "size": count * 4, "wrong": wrong, "time_us": seconds * 1e6, "nccl_version": nccl.get_version()}


def main(argv: list[str]) -> int:
    import os

    from gpu_worker.isolation.child import _drop_privileges, _read_request
    from gpu_worker.isolation.wire import MessageWriter

    request_fd, message_fd = int(argv[0]), int(argv[1])
    writer = MessageWriter(message_fd)
    request = _read_request(request_fd)
    _drop_privileges(request.get("drop_uid"), request.get("drop_gid"))
    facts: dict[str, Any] = {"type": "nccl", "uid": os.getuid(), "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
    facts["env"] = {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}
    try:
        facts |= _all_reduce(int(request.get("size", 1 << 20)), int(request.get("iters", 10)))
    except Exception as exc:  # the point of the probe is to say what failed
        facts["error"] = f"{type(exc).__name__}: {exc}"
    writer.send(facts)
    writer.send({"type": "done"})
    return 0


def probe(gpus: int, size: int = 1 << 20, iters: int = 10, wall_seconds: float = 120.0) -> dict[str, Any]:
    """Run the child in a job's sandbox with `limits.gpus = gpus`; its `nccl` facts plus the sandbox's own."""
    from gpu_worker.isolation import sandbox

    found: dict[str, Any] = {}

    def keep(message: dict[str, Any]) -> None:
        if message.get("type") == "nccl":
            found.update(message)

    limits = Limits(gpus=gpus, wall_seconds=wall_seconds, cpu_seconds=int(wall_seconds) * 4)
    run = sandbox.run_sandboxed(
        {"size": size, "iters": iters},
        limits,
        "cuda",
        keep,
        final_types=frozenset({"done"}),
        child_module="gpu_worker.isolation.nccl_child",
    )
    return {**found, "returncode": run.returncode, "timed_out": run.timed_out, "sandbox": run.info,
            "output": run.output[-4000:]}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
