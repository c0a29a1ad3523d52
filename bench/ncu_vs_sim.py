"""The simulator's memory analysis checked against Nsight Compute: sectors per request and bank-conflict ways.

Two sides, one table:

    python bench/ncu_vs_sim.py --side sim --out bench/results/sim-memtrace.json        # CPU, committed
    python3 bench/ncu_vs_sim.py --side gpu --sim bench/results/sim-memtrace.json --out DIR   # the GPU, as root

The sim side runs each kernel of `bench/memory_kernels.py` once on Numba's
simulator under `gpu_worker.science.memtrace` and writes, per kernel, the totals the
way ncu aggregates them: total sectors over total requests for global loads
and stores, total wavefronts (ways) over total shared-memory instructions. The
GPU side runs each kernel once under ncu (`gpu_worker.measurement.ncu`'s command line and
parser; a small child process per kernel, this file with `--child`) and writes
DIR/ncu-vs-sim.md (kernel | metric | sim | ncu | ratio | within 10%?),
DIR/ncu-vs-sim.json and each raw ncu log, DIR/ncu-<kernel>.csv.

What a "request" is, on both sides. ncu's `l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}`
counts one request per warp-level global load or store instruction executed
(Volta and later); its sectors are the 32-byte sectors those requests touch at
the L1's tag stage. The tracer groups thread accesses by (launch, block, warp
= linear thread id // 32, load or store site, k-th execution of that site by
the thread): one dynamic warp instruction, so the same unit, including inside
loops (the tiled transpose's 4 trips are 4 requests per warp either way, unrolled
or not) and in 2-D blocks (the hardware's warps are linear thread ids too,
x fastest; a (32, 8) block is 8 warps of one row each). The counts then agree
per warp as well as per request, and the table shows both. Where they could
part: the compiler may merge neighbouring loads into one vector load or drop
a repeated one (the tracer counts Python subscripts), a warp whose threads
are all predicated off issues nothing (the tracer records nothing either), and
8- and 16-byte shared accesses take at least 2 and 4 wavefronts on the
hardware where the tracer counts ways per phase. None of these kernels does
any of that: 4-byte floats, one subscript per instruction.

Shared-memory ways: ncu's are `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*`
over `smsp__sass_inst_executed_op_shared_*` (NVIDIA's own rule,
SharedMemoryConflicts.py, computes "N-way" the same way); the tracer's are the
most distinct words one bank is asked for, per request, averaged.

On the GPU: numba 0.68 with NumPy 2.5 (numpy.row_stack is set back before numba
imports), ncu found as `gpu_worker.measurement.ncu.find_ncu` finds it, run as root (the
counters need it unless the driver allows every user).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.memory_kernels import KERNELS, MemoryKernel  # noqa: E402

TOLERANCE = 0.10
# (metric, sim key, how the ncu value is made from gpu_worker.measurement.ncu's facts and raw counters)
METRICS = (
    ("global load sectors/request", "global_load_sectors_per_request"),
    ("global store sectors/request", "global_store_sectors_per_request"),
    ("shared load ways", "shared_load_ways"),
    ("shared store ways", "shared_store_ways"),
    ("global load requests/warp", "global_load_requests_per_warp"),
    ("global store requests/warp", "global_store_requests_per_warp"),
    ("shared load requests/warp", "shared_load_requests_per_warp"),
    ("shared store requests/warp", "shared_store_requests_per_warp"),
)
NCU_REQUESTS = {
    "global_load": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "global_store": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "shared_load": "smsp__sass_inst_executed_op_shared_ld.sum",
    "shared_store": "smsp__sass_inst_executed_op_shared_st.sum",
}


def _load(kernel: MemoryKernel, folder: Path) -> tuple[Any, str]:
    """The kernel's module from its own file (the tracer attributes accesses to that file's lines)."""
    path = folder / f"{kernel.name}.py"
    path.write_text(kernel.source)
    spec = importlib.util.spec_from_file_location(f"memory_kernel_{kernel.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, kernel.entry), str(path)


def ncu_style(report: dict[str, Any], warps: int) -> dict[str, Any]:
    """A memtrace report's per-site lines summed the way ncu sums a kernel: totals over totals."""
    totals: dict[str, list[float]] = {}
    for line in report["lines"]:
        if line["access"] not in ("load", "store"):
            continue
        key = f"{line['kind']}_{line['access']}"
        per = line["sectors_per_request"] if line["kind"] == "global" else line["bank_conflict_ways"]
        cost, requests = totals.setdefault(key, [0.0, 0.0])
        totals[key] = [cost + round(per * line["requests"]), requests + line["requests"]]
    out: dict[str, Any] = {"warps": warps, "threads": report["threads"], "truncated": report["truncated"]}
    for key in NCU_REQUESTS:
        cost, requests = totals.get(key, [0.0, 0.0])
        unit = "sectors_per_request" if key.startswith("global") else "ways"
        out[f"{key}_{unit}"] = round(cost / requests, 3) if requests else None
        out[f"{key}_requests"] = int(requests)
        out[f"{key}_requests_per_warp"] = round(requests / warps, 3) if requests else None
    return out


def sim_side(out: Path) -> dict[str, Any]:
    """Every kernel once on the simulator under the tracer, at its sim size."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # before numba is imported
    import numpy as np

    from gpu_worker.science.memtrace import analyse_launch

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memory-kernels-") as folder:
        for name, kernel in KERNELS.items():
            sub = Path(folder) / name
            sub.mkdir()
            handle, path = _load(kernel, sub)
            made: list[np.ndarray] = []

            def array(shape: tuple[int, ...], made: list[np.ndarray] = made) -> np.ndarray:
                """The input counts from 1; the output starts as NaN, as the engine poisons it."""
                if made:
                    found = np.full(shape, np.nan, dtype=np.float32)
                else:
                    found = (np.arange(math.prod(shape), dtype=np.float32) + 1).reshape(shape)
                made.append(found)
                return found

            size = kernel.sim_size
            args = kernel.arguments(size, array)
            grid, block = kernel.launch(size)
            started = time.perf_counter()
            report = analyse_launch(handle, grid, block, args, path, source=kernel.source).model_dump(mode="json")
            results[name] = {
                "entry": kernel.entry,
                "shows": kernel.shows,
                "size": size,
                "grid": list(grid),
                "block": list(block),
                "correct": kernel.correct(args),
                **ncu_style(report, kernel.warps(size)),
                "lines": [
                    {k: line[k] for k in ("line", "expression", "kind", "access", "requests")}
                    | {"cost": line["sectors_per_request"] or line["bank_conflict_ways"]}
                    for line in report["lines"]
                ],
            }
            seconds = time.perf_counter() - started
            brief = {k: v for k, v in results[name].items() if k != "lines"}
            print(f"sim {name} ({seconds:.2f} s): {json.dumps(brief)}", flush=True)
    import numba

    document = {"side": "sim", "numba": numba.__version__, "model": report["model"], "kernels": results}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1) + "\n")
    return document


def child(name: str) -> None:
    """The program ncu profiles: one kernel launched once at its GPU size."""
    import numpy

    if not hasattr(numpy, "row_stack"):  # numba 0.68 still calls it; NumPy 2.5 removed it
        numpy.row_stack = numpy.vstack  # type: ignore[attr-defined]
    from numba import cuda

    kernel = KERNELS[name]
    with tempfile.TemporaryDirectory(prefix="memory-kernel-") as folder:
        handle, _ = _load(kernel, Path(folder))
        size = kernel.gpu_size
        args = kernel.arguments(size, lambda shape: cuda.device_array(shape, dtype=numpy.float32))
        grid, block = kernel.launch(size)
        handle[grid, block](*args)
        cuda.synchronize()
    print(f"child {name}: launched {grid} x {block}", flush=True)


def ncu_values(facts: dict[str, Any], warps: int) -> dict[str, Any]:
    """gpu_worker.measurement.ncu's facts in the sim side's keys."""
    raw = facts.get("raw", {})
    out = {k: facts.get(k) for k in (m[1] for m in METRICS[:4])}
    for key, metric in NCU_REQUESTS.items():
        requests = raw.get(metric)
        out[f"{key}_requests"] = requests
        out[f"{key}_requests_per_warp"] = round(requests / warps, 3) if requests else None
    return out


def compare(sim: dict[str, Any], gpu: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per metric either side measured: both values, their ratio, and whether it is within 10%."""
    rows = []
    for label, key in METRICS:
        s, g = sim.get(key), gpu.get(key)
        if s is None and not g:
            continue
        ratio = g / s if s and g is not None else None
        rows.append(
            {
                "metric": label,
                "sim": s,
                "ncu": g,
                "ratio": round(ratio, 3) if ratio is not None else None,
                "within": ratio is not None and abs(ratio - 1) <= TOLERANCE,
            }
        )
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def markdown(document: dict[str, Any]) -> str:
    lines = [
        f"# Simulator memory trace vs Nsight Compute ({document['device']}, ncu {document['ncu_version']})",
        "",
        f"sim: numba {document['sim_numba']} simulator at small sizes; ncu: one launch at the GPU size. "
        "Requests are warp-level instructions on both sides (see bench/ncu_vs_sim.py).",
        "",
        "| kernel | metric | sim | ncu | ratio | within 10%? |",
        "|---|---|---|---|---|---|",
    ]
    for name, entry in document["kernels"].items():
        if entry.get("error"):
            lines.append(f"| {name} | (ncu failed: {entry['error']}) | | | | no |")
            continue
        for row in entry["rows"]:
            ok = "yes" if row["within"] else "**no**"
            cells = [name, row["metric"], _cell(row["sim"]), _cell(row["ncu"]), _cell(row["ratio"]), ok]
            lines.append("| " + " | ".join(cells) + " |")
    total = sum(len(e.get("rows", [])) for e in document["kernels"].values())
    good = sum(r["within"] for e in document["kernels"].values() for r in e.get("rows", []))
    lines += ["", f"{good} of {total} rows within 10%."]
    return "\n".join(lines) + "\n"


def _device() -> str:
    try:
        query = ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]
        return subprocess.run(query, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "GPU"


def gpu_side(sim_path: Path, out: Path) -> dict[str, Any]:
    """Every kernel once under ncu, compared with the sim side's file."""
    from gpu_worker.measurement import ncu

    sim = json.loads(sim_path.read_text())
    tool = ncu.find_ncu()
    if tool is None:
        raise SystemExit("Nsight Compute (ncu) is not installed here: set WARPLAB_NCU or put ncu on PATH")
    out.mkdir(parents=True, exist_ok=True)
    document: dict[str, Any] = {
        "side": "gpu",
        "device": _device(),
        "ncu": tool,
        "ncu_version": ncu.version(tool),
        "sim_numba": sim.get("numba", "?"),
        "kernels": {},
    }
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    for name, kernel in KERNELS.items():
        log = out / f"ncu-{name}.csv"
        argv = ncu.command(tool, kernel.entry, log, [sys.executable, str(Path(__file__).resolve()), "--child", name])
        started = time.perf_counter()
        entry: dict[str, Any] = {"shows": kernel.shows, "size": kernel.gpu_size, "argv": argv}
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
            entry["child_output"] = (proc.stdout + proc.stderr)[-1500:]
            facts = ncu.parse_log(log.read_text(errors="replace") if log.exists() else "", kernel.entry)
        except ncu.NcuError as exc:
            entry["error"] = f"{exc.reason} ({exc.detail})"
        except subprocess.TimeoutExpired:
            entry["error"] = "ncu took longer than 300 s"
        else:
            entry["ncu"] = ncu_values(facts, kernel.warps(kernel.gpu_size))
            entry["facts"] = {k: v for k, v in facts.items() if k != "explanations"}
            entry["rows"] = compare(sim["kernels"][name], entry["ncu"])
        entry["seconds"] = round(time.perf_counter() - started, 1)
        entry["sim"] = sim["kernels"][name]
        document["kernels"][name] = entry
        print(f"gpu {name}: {entry.get('error') or entry['rows']} ({entry['seconds']} s)", flush=True)
    (out / "ncu-vs-sim.json").write_text(json.dumps(document, indent=1, default=str) + "\n")
    table = markdown(document)
    (out / "ncu-vs-sim.md").write_text(table)
    print(table, flush=True)
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("sim", "gpu"))
    parser.add_argument("--out", type=Path, help="sim: the JSON file to write; gpu: a folder")
    parser.add_argument("--sim", type=Path, default=ROOT / "bench" / "results" / "sim-memtrace.json")
    parser.add_argument("--child", choices=sorted(KERNELS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    if args.side == "sim":
        sim_side(args.out or ROOT / "bench" / "results" / "sim-memtrace.json")
        return 0
    if args.side == "gpu":
        if args.out is None:
            parser.error("--side gpu needs --out DIR")
        document = gpu_side(args.sim, args.out)
        return 0 if all(not e.get("error") for e in document["kernels"].values()) else 1
    parser.error("give --side sim or --side gpu")
    return 2


if __name__ == "__main__":
    sys.exit(main())
