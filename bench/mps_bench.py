"""WarpLab's own engine on a shared GPU: learner jobs from two or more workers, alone, time-sliced and under MPS.

    python3 bench/mps_bench.py run --out-dir DIR --mode alone|timeslice|mps [--percentages 70,30] [--dry-run]
    python3 bench/mps_bench.py worker --index I --start-at T --jobs J --out FILE   # one worker (run starts them)
    python3 bench/mps_bench.py report DIR [DIR ...] --out-dir DIR                  # the table over every run

Unlike bench/sharing_bench.py (synthetic FMA kernels), each worker here is a process that runs real
learner jobs through `gpu_worker.engine.run_job`, one after another, as a GPU worker of one slice does:
a batch alternating small jobs (vector-add's reference) and large ones (transpose's reference), both
compiled, checked and timed by the engine (CUDA events, L2 flushed, median and spread). Modes:
- `alone`: one worker, no MPS: the baseline of latency and of each kernel's median;
- `timeslice`: N workers, no MPS: the driver time-slices their contexts;
- `mps`: N workers as MPS clients, each at its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (and WARPLAB_SLICE_KIND=mps,
  so the engine flags its timings "shared GPU: indicative").
Measured per mode: throughput (jobs a second over all workers), each job's latency (submit to result,
p50/p95), and the timing spread: each kernel's median against the same kernel's median alone.
The workers wait for one common start so that they overlap. This file never starts or stops an MPS
daemon (bench/device_mps.sh does, and always quits it) and never changes MIG, clocks or the compute mode.
A dry run uses the simulator backend on the CPU and says so: its numbers are not a GPU's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

JOBS = (("small", "vector-add"), ("large", "transpose"))
START_DELAY_S = 15.0  # each worker imports CuPy/Numba and makes its context before the common start


def _percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def _largest_median_ms(result: dict[str, Any]) -> float | None:
    sizes = (result.get("timing") or {}).get("sizes") or []
    medians = [s.get("median_ms") for s in sizes if s.get("median_ms")]
    return medians[-1] if medians else None


def worker(args: argparse.Namespace) -> int:
    """Run `args.jobs` jobs back to back from `args.start_at`; write each job's facts to `args.out`."""
    from gpu_worker.engine import run_job
    from gpu_worker.exercise.labspec import find_lab
    from gpu_worker.protocol import Job

    backend = "sim" if args.dry_run else "cuda"
    language = "numba" if args.dry_run else args.language
    labs = {kind: find_lab(slug) for kind, slug in JOBS}
    done: list[dict[str, Any]] = []
    time.sleep(max(0.0, args.start_at - time.time()))
    began = time.time()
    for i in range(args.jobs):
        kind, slug = JOBS[i % len(JOBS)]
        lab = labs[kind]
        job = Job(
            submission_id=100_000 * (args.index + 1) + i,
            exercise=lab.exercise_ref(language),
            source=lab.references[language],
            requested_by=f"bench-worker-{args.index}",
        )
        sent = time.time()
        result = run_job(job, lambda _event: None, backend=backend).model_dump(mode="json")
        flags = sorted({f for t in (result.get("timing") or {}).get("sizes") or [] for f in t.get("flags") or []})
        done.append(
            {
                "kind": kind,
                "slug": slug,
                "verdict": result.get("verdict"),
                "latency_s": round(time.time() - sent, 4),
                "median_ms": _largest_median_ms(result),
                "device": result.get("device"),
                "flags": flags,
            }
        )
    facts = {
        "index": args.index,
        "mps_active_thread_percentage": os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        "mps_pipe": os.environ.get("CUDA_MPS_PIPE_DIRECTORY"),
        "began": began,
        "ended": time.time(),
        "jobs": done,
    }
    Path(args.out).write_text(json.dumps(facts, indent=1) + "\n")
    return 0


def run(args: argparse.Namespace) -> int:
    """Start the mode's workers with their environments, wait for them, and summarise."""
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    percentages = [int(p) for p in args.percentages.split(",")] if args.mode == "mps" else []
    count = 1 if args.mode == "alone" else (len(percentages) or args.workers)
    if args.mode == "mps" and not args.dry_run and not os.environ.get("CUDA_MPS_PIPE_DIRECTORY"):
        print("mps mode needs CUDA_MPS_PIPE_DIRECTORY: bench/device_mps.sh starts the daemon", file=sys.stderr)
        return 2
    if any(not 1 <= p <= 100 for p in percentages):
        print(f"an active thread percentage is from 1 to 100; got {percentages}", file=sys.stderr)
        return 2
    start_at = time.time() + (2.0 if args.dry_run else START_DELAY_S)
    procs = []
    for index in range(count):
        env = dict(os.environ)
        if args.mode == "mps":
            env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(percentages[index])
            env["WARPLAB_SLICE_KIND"] = "mps"
        else:
            env.pop("CUDA_MPS_PIPE_DIRECTORY", None)  # not an MPS client, even if a daemon runs
            env["WARPLAB_SLICE_KIND"] = "timeslice" if args.mode == "timeslice" else "full"
        argv = [sys.executable, __file__, "worker", "--index", str(index), "--start-at", str(start_at)]
        argv += ["--jobs", str(args.jobs), "--language", args.language, "--out", str(out / f"worker-{index}.json")]
        argv += ["--dry-run"] if args.dry_run else []
        procs.append(subprocess.Popen(argv, env=env))
    codes = [p.wait(timeout=args.timeout) for p in procs]
    workers = [json.loads((out / f"worker-{i}.json").read_text()) for i in range(count) if codes[i] == 0]
    scenario = {
        "mode": args.mode,
        "percentages": percentages,
        "workers": workers,
        "exit_codes": codes,
        "dry_run": args.dry_run,
        "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    (out / "scenario.json").write_text(json.dumps(scenario, indent=1) + "\n")
    print(json.dumps(summarise(scenario), indent=1))
    return 0 if all(c == 0 for c in codes) else 1


def summarise(scenario: dict[str, Any], baseline: dict[str, float] | None = None) -> dict[str, Any]:
    """Throughput, latency percentiles, and each kind's kernel median (and its ratio to the baseline's)."""
    jobs = [j for w in scenario["workers"] for j in w["jobs"]]
    if not jobs:
        return {"mode": scenario["mode"], "jobs": 0}
    span = max(w["ended"] for w in scenario["workers"]) - min(w["began"] for w in scenario["workers"])
    row: dict[str, Any] = {
        "mode": scenario["mode"],
        "percentages": scenario.get("percentages") or [],
        "workers": len(scenario["workers"]),
        "jobs": len(jobs),
        "accepted": sum(j["verdict"] == "accepted" for j in jobs),
        "throughput_jobs_per_s": round(len(jobs) / span, 3) if span > 0 else None,
        "latency_p50_s": _percentile([j["latency_s"] for j in jobs], 0.5),
        "latency_p95_s": _percentile([j["latency_s"] for j in jobs], 0.95),
        "shared_flagged": sum("shared_gpu" in j["flags"] for j in jobs),
        "dry_run": scenario.get("dry_run", False),
    }
    for kind, _ in JOBS:
        medians = [j["median_ms"] for j in jobs if j["kind"] == kind and j["median_ms"]]
        if medians:
            row[f"{kind}_median_ms"] = round(statistics.median(medians), 5)
            row[f"{kind}_spread"] = round(max(medians) / min(medians), 3)
            if baseline and baseline.get(kind):
                row[f"{kind}_vs_alone"] = round(statistics.median(medians) / baseline[kind], 3)
    return row


def markdown(rows: list[dict[str, Any]], device: str) -> str:
    cols = ["mode", "percentages", "workers", "jobs", "accepted", "throughput_jobs_per_s", "latency_p50_s"]
    cols += ["latency_p95_s", "small_median_ms", "small_vs_alone", "small_spread", "large_median_ms"]
    cols += ["large_vs_alone", "large_spread", "shared_flagged"]
    lines = [f"Device: {device}", ""]
    if any(r.get("dry_run") for r in rows):
        lines += ["**Dry run: the simulator backend on the CPU. These numbers are not a GPU's.**", ""]
    lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    lines += [
        "",
        "spread: the largest over the smallest kernel median of that kind in the mode; vs_alone: the mode's",
        "median over the same kernel's median with one worker alone. Latency: submit to result, per job.",
    ]
    return "\n".join(lines) + "\n"


def report(args: argparse.Namespace) -> int:
    scenarios = [json.loads((Path(d) / "scenario.json").read_text()) for d in args.dirs]
    alone = next((s for s in scenarios if s["mode"] == "alone"), None)
    baseline = None
    if alone:
        first = summarise(alone)
        baseline = {kind: first.get(f"{kind}_median_ms") for kind, _ in JOBS}
    rows = [summarise(s, baseline) for s in scenarios]
    devices = sorted({j.get("device") or "?" for s in scenarios for w in s["workers"] for j in w["jobs"]})
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "mps.json").write_text(json.dumps({"rows": rows, "scenarios": scenarios}, indent=1) + "\n")
    text = markdown(rows, ", ".join(devices))
    (out / "mps.md").write_text(text)
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out-dir", required=True)
    r.add_argument("--mode", choices=["alone", "timeslice", "mps"], required=True)
    r.add_argument("--workers", type=int, default=2)
    r.add_argument("--percentages", default="70,30")
    r.add_argument("--jobs", type=int, default=6, help="jobs per worker, small and large alternating")
    r.add_argument("--language", choices=["cuda", "numba"], default="cuda")
    r.add_argument("--timeout", type=float, default=400)
    r.add_argument("--dry-run", action="store_true")
    r.set_defaults(handler=run)
    w = sub.add_parser("worker")
    w.add_argument("--index", type=int, required=True)
    w.add_argument("--start-at", type=float, required=True)
    w.add_argument("--jobs", type=int, required=True)
    w.add_argument("--language", default="cuda")
    w.add_argument("--out", required=True)
    w.add_argument("--dry-run", action="store_true")
    w.set_defaults(handler=worker)
    p = sub.add_parser("report")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--out-dir", required=True)
    p.set_defaults(handler=report)
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
