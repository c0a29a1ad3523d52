"""Cold against warm starts on the sim backend: 10 vector-add (Numba) jobs each way, through `engine.run_job`.

    .venv/bin/python bench/warm_start.py [--jobs 10] [--pause 1.0]

Prints, per mode, the median seconds from the `run_job` call to the first
`check` event and to the `done` event, and the cold/warm ratios. Modes, in one
run: `cold` (WARPLAB_SPARE_SANDBOX=0: a fresh sandboxed child per job);
`warm` (spares on, jobs back to back: each job also shares the CPU with the
next spare's imports); `warm+pause` (spares on, `--pause` seconds between jobs,
so each spare is ready when its job arrives). Before each warm mode one
unmeasured job starts the first spare.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpu_worker.engine import run_job  # noqa: E402
from gpu_worker.exercise.labspec import find_lab  # noqa: E402
from gpu_worker.isolation import spare  # noqa: E402
from gpu_worker.protocol import Event, Job  # noqa: E402

_ids = itertools.count(70_000)
KERNEL = """from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


def one_job() -> tuple[float, float, str, bool]:
    """Seconds to the first `check` and to `done`, the verdict, and whether a spare served it."""
    exercise = find_lab("vector-add").exercise_ref("numba")
    job = Job(submission_id=next(_ids), exercise=exercise, source=KERNEL, requested_by="bench")
    marks: dict[str, float] = {}
    t0 = time.perf_counter()

    def emit(event: Event) -> None:
        marks.setdefault(event.type, time.perf_counter() - t0)

    result = run_job(job, emit, backend="sim")
    return marks.get("check", float("nan")), marks["done"], result.verdict, bool(result.sandbox.get("warm_start"))


def mode(name: str, jobs: int, warm: bool, pause: float) -> dict[str, float]:
    os.environ[spare.ENV] = "1" if warm else "0"
    spare.shutdown()
    if warm:
        one_job()  # cold; starts the first spare
        time.sleep(pause)
    rows = []
    for _ in range(jobs):
        rows.append(one_job())
        time.sleep(pause)
    spare.shutdown()
    served = sum(r[3] for r in rows)
    verdicts = sorted({r[2] for r in rows})
    check = statistics.median(r[0] for r in rows)
    done = statistics.median(r[1] for r in rows)
    print(f"{name:11s} n={jobs} served_by_spare={served} verdicts={verdicts} check={check:.3f} s done={done:.3f} s")
    return {"check": check, "done": done}


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--jobs", type=int, default=10)
    options.add_argument("--pause", type=float, default=1.0)
    args = options.parse_args()
    print(f"{os.cpu_count()} CPUs, sim backend, vector-add numba reference, medians over {args.jobs} jobs")
    cold = mode("cold", args.jobs, warm=False, pause=0.0)
    warm = mode("warm", args.jobs, warm=True, pause=0.0)
    paused = mode("warm+pause", args.jobs, warm=True, pause=args.pause)
    for name, found in (("warm", warm), ("warm+pause", paused)):
        print(
            f"cold/{name}: to first check {cold['check'] / found['check']:.2f}x, "
            f"to done {cold['done'] / found['done']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
