"""The per-GPU lock's queue, modelled on the CPU: how a job's passes through it add up under a class's load.

Run 24 measured a graded job under 8 learners on an H100 at 3.1 s, of which 1.8 s was waiting for the GPU
lock while the GPU itself was busy 0.08 s a job. The lock's protocol (`gpu_worker.measurement.gpu_lock`:
timings exclusive behind a writer-first gate, correctness work shared) can be run without a GPU: here
`--workers` processes each run jobs back to back, every job holding the real lock (open-file-description
locks on a file in a temporary folder) for the times run 24 measured, asleep while it holds it, in one of
three shapes:

- `six-passes`: each size's correctness work in six shared holds, then its timing (708ea32, run 23);
- `per-size`: each size's correctness work in one shared hold, its timing, its comparisons (run 24's main);
- `together`: every size's correctness work in one shared hold, every size timed in one exclusive hold
  with its comparisons inside (built in the child on 2026-12-06 and taken out again when this model showed
  it no better: two long holds a job instead of nine shorter ones);
- `beside`: correctness work takes no lock (run 22, `WARPLAB_CHECKS_BESIDE_TIMINGS=1`): the timings' queue alone;
- `alone`: correctness work takes the lock exclusively too (`WARPLAB_CHECKS_ALONE=1`), each size's three
  holds exclusive. Its `--shared-per-size` is then the correctness work's length alone, which the model
  cannot derive from the shared shapes' (under 8 learners a later size's shared hold was 0.066 s, the same
  work on a quiet machine 0.003 s). Run 26 measured it on an H100: 0.030-0.048 s a size alone (host work on a
  busy host), and fewer jobs an hour than shared (bench/results/2026-12-07-lock-model-alone.md).

`--shared-per-size` replaces run 24's 0.151 s of correctness work a size (most of it host work inside the
hold) to ask what shorter shared holds would do.

Each shape runs for `--seconds` in turn, in one invocation, and the table gives jobs an hour, the job's
latency in the worker (p50 / p95) and the time spent waiting for the lock. Sleeps stand in for GPU and host
work, so it says what the protocol's queue does with run 24's holds, not what a GPU will measure: a CPU
model, to choose what to measure next.

    python3 bench/lock_model.py --workers 8 --seconds 20
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_worker.measurement.gpu_lock import EXCLUSIVE, SHARED, GpuLock  # noqa: E402

# Run 24 (H100, 8 learners, per-size main), seconds per size unless said: the measuring process's phases
SIZES = 3
SHARED_PER_SIZE = 0.151  # inputs 0.085 + checked launches 0.186 + occupancy 0.016 + timed sets 0.167, over 3 sizes
EXCLUSIVE_PER_SIZE = 0.054  # the lock held 0.162 s a job
COMPARE_PER_SIZE = 0.010  # the timed launches' comparisons
UNLOCKED_PER_JOB = 0.45  # compile and the verdict's tail in the worker, outside any hold
SHAPES = ("six-passes", "per-size", "together", "beside", "alone")


def _holds(shape: str, shared: float = SHARED_PER_SIZE) -> list[tuple[str | None, float]]:
    """One job's holds of the lock, in order: (kind, seconds); kind None: the same work, holding nothing."""
    holds: list[tuple[str | None, float]] = []
    if shape == "together":
        holds.append((SHARED, SIZES * shared))
        holds.append((EXCLUSIVE, SIZES * (EXCLUSIVE_PER_SIZE + COMPARE_PER_SIZE)))
        return holds
    checks = {"beside": None, "alone": EXCLUSIVE}.get(shape, SHARED)  # the kind correctness work takes
    for _ in range(SIZES):
        if shape == "six-passes":  # inputs, checked launch, two timed sets, their expected outputs
            holds += [(SHARED, shared / 5)] * 5
        else:
            holds.append((checks, shared))
        holds.append((EXCLUSIVE, EXCLUSIVE_PER_SIZE))
        holds.append((checks, COMPARE_PER_SIZE))
    return holds


def _worker(shape: str, shared: float, folder: str, until: float, out: Any) -> None:
    lock = GpuLock("model", directory=folder)
    holds = _holds(shape, shared)
    jobs = []
    while time.monotonic() < until:
        start, waited = time.monotonic(), 0.0
        time.sleep(UNLOCKED_PER_JOB / 2)
        for kind, seconds in holds:
            if kind is None:
                time.sleep(seconds)
                continue
            with lock.hold(timeout=120, kind=kind) as wait:
                waited += wait
                time.sleep(seconds)
        time.sleep(UNLOCKED_PER_JOB / 2)
        jobs.append((time.monotonic() - start, waited))
    out.put(jobs)


def run_shape(shape: str, workers: int, seconds: float, shared: float = SHARED_PER_SIZE) -> dict[str, Any]:
    """`workers` processes running jobs of this shape back to back for `seconds`."""
    folder = tempfile.mkdtemp(prefix="warplab-lock-model-")
    out: multiprocessing.Queue = multiprocessing.Queue()
    until = time.monotonic() + seconds
    procs = [multiprocessing.Process(target=_worker, args=(shape, shared, folder, until, out)) for _ in range(workers)]
    started = time.monotonic()
    for p in procs:
        p.start()
    jobs = [job for _ in procs for job in out.get()]
    for p in procs:
        p.join()
    wall = time.monotonic() - started
    latency = sorted(j[0] for j in jobs)
    waits = [j[1] for j in jobs]
    return {
        "shape": shape,
        "passes_per_job": sum(kind is not None for kind, _ in _holds(shape, shared)),
        "shared_per_size_s": shared,
        "jobs": len(jobs),
        "jobs_per_hour": round(len(jobs) / wall * 3600),
        "latency_p50_s": round(statistics.median(latency), 3),
        "latency_p95_s": round(latency[int(0.95 * (len(latency) - 1))], 3),
        "lock_wait_p50_s": round(statistics.median(waits), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--shared-per-size", type=float, default=SHARED_PER_SIZE)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = [run_shape(shape, args.workers, args.seconds, args.shared_per_size) for shape in args.shapes.split(",")]
    print(
        f"{args.workers} workers, {args.seconds:g} s a shape, {os.cpu_count()} CPUs; sleeps for run 24's holds, "
        f"{args.shared_per_size:g} s of correctness work a size"
    )
    print("| shape | passes a job | jobs an hour | latency p50 / p95 | lock wait p50 |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['shape']} | {r['passes_per_job']} | {r['jobs_per_hour']} | "
            f"{r['latency_p50_s']} / {r['latency_p95_s']} s | {r['lock_wait_p50_s']} s |"
        )
    if args.json:
        args.json.write_text(json.dumps({"workers": args.workers, "seconds": args.seconds, "rows": rows}, indent=1))
        print(f"written {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
