"""GPU sharing as an experiment: a batch of jobs on a whole GPU, time-sliced between two processes, and under MPS.

    python3 bench/sharing_bench.py run --out-dir DIR [--modes whole,timeslice,mps] [--mps-percentages 100,50,25]
    python3 bench/sharing_bench.py run --out-dir DIR --dry-run     # CPU only: checks the orchestration and the report
    python3 bench/sharing_bench.py worker --role batch|probe ...   # one process of a scenario (run starts them)

Two kinds of process, each its own CUDA context (CuPy):
- a *batch* process runs jobs back to back for a few seconds, each job a fixed number of launches of a
  compute-bound FMA kernel that fills the GPU; it reports jobs per second and each job's latency;
- a *probe* process launches one tiny kernel (one block) every millisecond, timed with CUDA events: the
  latency-sensitive neighbour. Its spread (p99 / p50) is what a graded timing would suffer.

Scenarios: `whole` (a batch alone, a probe alone: the baselines), `timeslice` (two batch processes, then a
probe beside a batch, with no MPS: the driver time-slices the two contexts), and `mps` (the same pairs as
MPS clients at each CUDA_MPS_ACTIVE_THREAD_PERCENTAGE). The processes of a scenario wait for one start time,
so they overlap. MPS needs a control daemon: bench/device_sharing.sh starts one with private pipe and log
folders and quits it, whatever happens; this file never starts or stops it, and never changes MIG, clocks
or the compute mode.

Writes DIR/sharing.json (every process's numbers, the device and the date) and DIR/sharing.md (the table).
A dry run replaces the kernels by CPU loops and says so in both files: its numbers are not a GPU's.
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

HEAVY = r"""
extern "C" __global__ void burn(float* out, int iters) {
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.5f, d = 0.25f;
    for (int i = 0; i < iters; ++i) {  // four independent chains: the FMA pipes stay busy
        a = fmaf(a, b, 1e-7f); c = fmaf(c, b, 1e-7f); d = fmaf(d, b, 1e-7f); b = fmaf(b, 0.9999f, 1e-7f);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}
"""
START_DELAY_S = 8.0  # every process creates its context and warms up before the common start
PROBE_GAP_S = 0.001


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def _gpu_worker(role: str, seconds: float, start_at: float, launches: int, iters: int, blocks: int) -> dict[str, Any]:
    import cupy as cp

    kernel = cp.RawKernel(HEAVY, "burn")
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms_seen = int(props["multiProcessorCount"])  # under MPS with a thread percentage: the client's share
    out = cp.zeros(blocks * 256, dtype=cp.float32)
    heavy = ((blocks,), (256,), (out, cp.int32(iters)))  # the same work in every mode, whatever the SMs seen
    tiny = ((1,), (32,), (out, cp.int32(200)))
    for _ in range(3):  # compile, load, warm up
        kernel(*heavy)
        kernel(*tiny)
    cp.cuda.Device().synchronize()
    time.sleep(max(0.0, start_at - time.time()))
    samples: list[float] = []
    host: list[float] = []  # the probe's launch-to-done latency as its host sees it
    begin = time.perf_counter()
    if role == "batch":
        while time.perf_counter() - begin < seconds:
            t0 = time.perf_counter()
            for _ in range(launches):
                kernel(*heavy)
            cp.cuda.Device().synchronize()
            samples.append((time.perf_counter() - t0) * 1e3)  # ms per job
    else:
        start, end = cp.cuda.Event(), cp.cuda.Event()
        while time.perf_counter() - begin < seconds:
            t0 = time.perf_counter()
            start.record()
            kernel(*tiny)
            end.record()
            end.synchronize()
            host.append((time.perf_counter() - t0) * 1e6)
            samples.append(cp.cuda.get_elapsed_time(start, end) * 1e3)  # us per launch
            time.sleep(PROBE_GAP_S)
    elapsed = time.perf_counter() - begin
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return {**_summary(role, samples, elapsed, name, host), "sms_seen": sms_seen, "blocks": blocks}


def _cpu_worker(role: str, seconds: float, start_at: float, launches: int, iters: int, blocks: int) -> dict[str, Any]:
    """The dry run's stand-in: the same loop shape on the CPU. Its numbers say nothing about a GPU."""
    time.sleep(max(0.0, start_at - time.time()))
    samples: list[float] = []
    begin = time.perf_counter()
    while time.perf_counter() - begin < seconds:
        t0 = time.perf_counter()
        x = 0.0
        for i in range(20_000 if role == "batch" else 200):
            x += i * 1e-9
        samples.append((time.perf_counter() - t0) * (1e3 if role == "batch" else 1e6))
        if role == "probe":
            time.sleep(PROBE_GAP_S)
    return _summary(role, samples, time.perf_counter() - begin, "CPU (dry run: not a GPU)", samples)


def _summary(role: str, samples: list[float], elapsed: float, device: str, host: list[float]) -> dict[str, Any]:
    unit = "ms per job" if role == "batch" else "us per launch (CUDA events)"
    found: dict[str, Any] = {"role": role, "device": device, "count": len(samples), "seconds": round(elapsed, 3)}
    found |= {"unit": unit, "p50": _percentile(samples, 0.5), "p99": _percentile(samples, 0.99), "max": max(samples)}
    if role == "batch":
        found["throughput"] = len(samples) / elapsed  # jobs per second
    found["spread"] = found["p99"] / found["p50"] if found["p50"] else None
    if role == "probe":  # what the probe's host waited, launch to done: time-slicing hides from CUDA events
        found |= {"host_us_p50": _percentile(host, 0.5), "host_us_p99": _percentile(host, 0.99)}
    return found


def _scenarios(modes: list[str], percentages: list[int]) -> list[tuple[str, str, list[str], dict[str, str]]]:
    """(mode, scenario, roles, extra environment) in the order they run."""
    found: list[tuple[str, str, list[str], dict[str, str]]] = []
    if "whole" in modes:
        found += [("whole", "batch alone", ["batch"], {}), ("whole", "probe alone", ["probe"], {})]
    if "timeslice" in modes:
        found += [
            ("timeslice", "two batches", ["batch", "batch"], {}),
            ("timeslice", "probe + batch", ["probe", "batch"], {}),
        ]
    if "mps" in modes:
        for p in percentages:
            env = {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": str(p)}
            found += [
                (f"mps {p}%", "two batches", ["batch", "batch"], env),
                (f"mps {p}%", "probe + batch", ["probe", "batch"], env),
            ]
    return found


def _run_scenario(roles: list[str], env: dict[str, str], args: argparse.Namespace) -> list[dict[str, Any]]:
    start_at = time.time() + (0.5 if args.dry_run else START_DELAY_S)
    command = [sys.executable, __file__, "worker", "--seconds", str(args.seconds), "--start-at", str(start_at)]
    command += ["--launches", str(args.launches), "--iters", str(args.iters), "--blocks", str(args.blocks)]
    command += ["--dry-run"] if args.dry_run else []
    procs = [
        subprocess.Popen([*command, "--role", role], env={**os.environ, **env}, stdout=subprocess.PIPE, text=True)
        for role in roles
    ]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=args.seconds + 120)
        results.append(json.loads(out.strip().splitlines()[-1]) if proc.returncode == 0 else {"error": proc.returncode})
    return results


def summarise(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per mode: aggregate throughput against the whole GPU's, job latency, the probe beside a batch."""
    alone = {s["scenario"]: s["processes"][0] for s in scenarios if s["mode"] == "whole"}
    rows = []
    for mode in dict.fromkeys(s["mode"] for s in scenarios):
        row: dict[str, Any] = {"mode": mode}
        mine = {s["scenario"]: s["processes"] for s in scenarios if s["mode"] == mode}
        batches = mine.get("two batches") or mine.get("batch alone") or []
        batches = [p for p in batches if p.get("role") == "batch"]
        if batches:
            row["throughput"] = sum(p["throughput"] for p in batches)
            row["job_latency_ms_p50"] = statistics.median(p["p50"] for p in batches)
            base = alone.get("batch alone")
            if base:
                row["throughput_vs_whole"] = row["throughput"] / base["throughput"]
        probe = next(
            (p for p in (mine.get("probe + batch") or mine.get("probe alone") or []) if p.get("role") == "probe"), None
        )
        if probe:
            row |= {"probe_us_p50": probe["p50"], "probe_us_p99": probe["p99"], "probe_spread": probe["spread"]}
            row |= {"probe_host_us_p50": probe["host_us_p50"], "probe_host_us_p99": probe["host_us_p99"]}
            base = alone.get("probe alone")
            if base:
                row["noisy_neighbour_slowdown_p99"] = probe["host_us_p99"] / base["host_us_p99"]
        rows.append(row)
    return rows


def markdown(document: dict[str, Any]) -> str:
    head = f"# GPU sharing: {document['device']}, {document['date']}\n\n"
    if document["dry_run"]:
        head += "**Dry run: CPU loops stood in for the kernels. These numbers are not a GPU's.**\n\n"
    head += (
        "Two processes per shared mode. Throughput: jobs per second of all batch processes together, "
        "and that over one batch process alone on the whole GPU. Probe: one tiny kernel every millisecond beside "
        "a batch process, timed with CUDA events (the GPU's view) and launch to done on its host (what its user "
        "waits); slowdown: the host p99 over the host p99 alone. The heavy kernel's grid is the same in every "
        "mode; an MPS client at a thread percentage sees fewer SMs (sms_seen in the JSON).\n\n"
    )
    cols = [
        ("mode", "mode", "{}"),
        ("throughput", "jobs/s", "{:.2f}"),
        ("throughput_vs_whole", "x whole", "{:.2f}"),
        ("job_latency_ms_p50", "job p50 (ms)", "{:.1f}"),
        ("probe_us_p50", "probe p50 (us)", "{:.1f}"),
        ("probe_us_p99", "probe p99 (us)", "{:.1f}"),
        ("probe_host_us_p50", "host p50 (us)", "{:.1f}"),
        ("probe_host_us_p99", "host p99 (us)", "{:.1f}"),
        ("noisy_neighbour_slowdown_p99", "p99 slowdown", "{:.1f}"),
    ]
    lines = ["| " + " | ".join(c[1] for c in cols) + " |", "|" + "---|" * len(cols)]
    for row in document["summary"]:
        lines.append("| " + " | ".join(fmt.format(row[k]) if k in row else "-" for k, _, fmt in cols) + " |")
    return head + "\n".join(lines) + "\n"


def _cmd_run(args: argparse.Namespace) -> int:
    modes = args.modes.split(",")
    if "mps" in modes and not args.dry_run and not os.environ.get("CUDA_MPS_PIPE_DIRECTORY"):
        print("mps: no CUDA_MPS_PIPE_DIRECTORY (start the daemon with bench/device_sharing.sh); left out", flush=True)
        modes.remove("mps")
    scenarios = []
    for mode, scenario, roles, env in _scenarios(modes, [int(p) for p in args.mps_percentages.split(",")]):
        started = time.time()
        if args.dry_run:
            env = {}  # no MPS client without a daemon
        processes = _run_scenario(roles, env, args)
        scenarios.append({"mode": mode, "scenario": scenario, "environment": env, "processes": processes})
        print(f"{mode:10s} {scenario:14s} {time.time() - started:5.1f} s: {json.dumps(processes)[:300]}", flush=True)
    devices = {p.get("device") for s in scenarios for p in s["processes"] if p.get("device")}
    document = {
        "device": ", ".join(sorted(devices)) or "unknown",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dry_run": bool(args.dry_run),
        "seconds_per_scenario": args.seconds,
        "launches_per_job": args.launches,
        "kernel_iters": args.iters,
        "kernel_blocks": args.blocks,
        "scenarios": scenarios,
    }
    document["summary"] = summarise(scenarios)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sharing.json").write_text(json.dumps(document, indent=1) + "\n")
    (out / "sharing.md").write_text(markdown(document))
    print(markdown(document))
    return 0 if all("error" not in p for s in scenarios for p in s["processes"]) else 1


def _cmd_worker(args: argparse.Namespace) -> int:
    work = _cpu_worker if args.dry_run else _gpu_worker
    print(json.dumps(work(args.role, args.seconds, args.start_at, args.launches, args.iters, args.blocks)), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    for name in ("run", "worker"):
        p = sub.add_parser(name)
        p.add_argument("--dry-run", action="store_true", help="CPU loops instead of kernels: checks the plumbing")
        p.add_argument("--seconds", type=float, default=3.0)
        p.add_argument("--launches", type=int, default=4, help="heavy kernel launches per batch job")
        p.add_argument("--iters", type=int, default=20000, help="FMA loop trips of the heavy kernel")
        p.add_argument(
            "--blocks", type=int, default=1056, help="blocks of 256 threads per heavy launch (8 per H200 SM)"
        )
    run, worker = sub.choices["run"], sub.choices["worker"]
    run.add_argument("--out-dir", required=True)
    run.add_argument("--modes", default="whole,timeslice,mps")
    run.add_argument("--mps-percentages", default="100,50,25")
    worker.add_argument("--role", choices=("batch", "probe"), required=True)
    worker.add_argument("--start-at", type=float, required=True)
    args = top.parse_args(argv)
    return _cmd_run(args) if args.command == "run" else _cmd_worker(args)


if __name__ == "__main__":
    sys.exit(main())
