"""One job through the engine with a clock on every event, for finding where a job stops on a GPU.

    python3 bench/engine_trace.py vector-add cuda --backend cuda --after 30

Prints each event's type and seconds since submit as it arrives; if the job is still running `--after`
seconds in, prints every thread's Python stack (faulthandler) and the process tree under this one (ps), and
again at each further `--after`. Ends with the verdict and the message.
"""

from __future__ import annotations

import argparse
import faulthandler
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from the repository root

from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Event, Job


def _tree(stop: threading.Event, every: float) -> None:
    while not stop.wait(every):
        print(f"--- still running after {every:.0f} s more: the process tree ---", flush=True)
        subprocess.run(["ps", "-eo", "pid,ppid,stat,etime,wchan:24,args", "--forest"], check=False)
        sys.stdout.flush()


def _facts(event: Event) -> str:
    """A timing event's own account of its size: GPU and wall seconds, samples, and the host phases."""
    if event.type != "timing":
        return ""
    facts = event.model_dump()
    phases = " ".join(f"{k} {v:.3f}" for k, v in (facts.get("host_phases_s") or {}).items())
    held = " ".join(f"{k} {v:.4f}" for k, v in (facts.get("hold_phases_s") or {}).items())  # inside the hold
    return (
        f"  {facts.get('sizes')} {facts.get('repeats')} samples ({facts.get('stop_reason')})"
        f" gpu {facts.get('gpu_seconds', 0):.3f} s wall {facts.get('wall_seconds', 0):.3f} s"
        f" lock wait {facts.get('lock_wait_seconds', 0):.3f} s held {facts.get('lock_held_seconds', 0):.3f} s"
        f" | {phases} | held: {held}"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("lab")
    parser.add_argument("language")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--after", type=float, default=30.0)
    args = parser.parse_args()
    lab = find_lab(args.lab)
    job = Job(
        submission_id=90_001,
        exercise=lab.exercise_ref(args.language),
        source=lab.references[args.language],
        requested_by="trace",
    )
    start = time.monotonic()

    def show(event: Event) -> None:
        print(f"{time.monotonic() - start:8.3f} s  {event.type}{_facts(event)}", flush=True)

    faulthandler.dump_traceback_later(args.after, repeat=True, file=sys.stdout)
    stop = threading.Event()
    threading.Thread(target=_tree, args=(stop, args.after), daemon=True).start()
    result = run_job(job, show, backend=args.backend)
    stop.set()
    faulthandler.cancel_dump_traceback_later()
    print(f"{time.monotonic() - start:8.3f} s  verdict {result.verdict}: {result.message[:400]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
