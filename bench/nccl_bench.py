"""NCCL's collectives measured as nccl-tests measures them, beside the alpha-beta model, on one multi-GPU host.

    python3 bench/nccl_bench.py --out "$OUT/nccl"             # every visible GPU, 8 B to 1 GiB, factor 2
    python3 bench/nccl_bench.py --out DIR --gpus 2 --largest 268435456 --backend torch

For all-reduce, all-gather, reduce-scatter and broadcast it reports, per size, the time per operation
(host clock around `--iters` back-to-back operations after `--warmup`, every GPU synchronised, as
nccl-tests does), algbw = S / t and busbw = algbw x factor (2(n-1)/n, (n-1)/n, (n-1)/n, 1), with S
counted as nccl-tests counts it (the whole gathered or scattered array for all-gather and
reduce-scatter). Each collective's result is checked once (nccl-tests' #wrong). Beside each row: the
model's busbw for the same n on H200 NVLink (gpu_worker.multigpu), ring and tree.

Backends: CuPy's NCCL bindings (one process drives every GPU, ncclCommInitAll, grouped calls) when
cupy.cuda.nccl is importable, else PyTorch (torch.distributed with the nccl backend, one spawned
process per GPU, rendezvous on 127.0.0.1). With fewer than two GPUs nothing is measured: the script
says so, writes the model table alone, and exits 3.

Writes nccl-bench.md, nccl-bench.json and, when plotly is importable, nccl-bench-figure.json
(model and measurement on one plot).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpu_worker.multigpu import collectives  # noqa: E402
from gpu_worker.multigpu.links import NVLINK_H200  # noqa: E402

COLLECTIVES = collectives.COLLECTIVES
FEWER_THAN_TWO = 3


def _shell(*argv: str) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"({argv[0]} failed: {exc})"


def gpu_count() -> tuple[int, list[str]]:
    """Visible GPUs by name, from nvidia-smi (none when it is missing or fails), cut to CUDA_VISIBLE_DEVICES."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return 0, []
    names = [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        names = names[: len([v for v in visible.split(",") if v.strip()])]
    return len(names), names


def elements(collective: str, size: int, n: int) -> tuple[int, int]:
    """(send, receive) element counts of float32 per rank for S = size bytes, as nccl-tests sizes them."""
    count = size // 4
    if collective == "all_gather":
        return count // n, (count // n) * n
    if collective == "reduce_scatter":
        return (count // n) * n, count // n
    return count, count


def model_row(collective: str, size: int, n: int) -> dict[str, float | None]:
    """The model's busbw for the same collective, size and n on H200 NVLink; none for one GPU (nothing crosses)."""
    if n < 2:
        return {"model_ring_busbw_gbs": None, "model_tree_busbw_gbs": None}
    ring = collectives.cost(collective, "ring", size, n, NVLINK_H200)
    tree = collectives.cost(collective, "tree", size, n, NVLINK_H200)
    return {"model_ring_busbw_gbs": ring.busbw / 1e9, "model_tree_busbw_gbs": tree.busbw / 1e9}


def _gbs(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


# ---- CuPy: one process, every GPU ------------------------------------------------------------------


def measure_cupy(n: int, sizes: list[int], warmup: int, iters: int) -> tuple[list[dict[str, Any]], str]:
    import cupy
    from cupy.cuda import nccl

    comms = nccl.NcclCommunicator.initAll(n)
    streams, rows = [], []
    for d in range(n):
        with cupy.cuda.Device(d):
            streams.append(cupy.cuda.Stream(non_blocking=True))
    largest = max(sizes) // 4
    send, recv = [], []
    for d in range(n):
        with cupy.cuda.Device(d):
            send.append(cupy.full(largest, d + 1, dtype=cupy.float32))
            recv.append(cupy.zeros(largest, dtype=cupy.float32))

    def launch(collective: str, nsend: int, nrecv: int) -> None:
        nccl.groupStart()
        for d in range(n):
            s, r, st = send[d].data.ptr, recv[d].data.ptr, streams[d].ptr
            if collective == "all_reduce":
                comms[d].allReduce(s, r, nsend, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, st)
            elif collective == "all_gather":
                comms[d].allGather(s, r, nsend, nccl.NCCL_FLOAT32, st)
            elif collective == "reduce_scatter":
                comms[d].reduceScatter(s, r, nrecv, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, st)
            else:
                comms[d].broadcast(s, r, nsend, nccl.NCCL_FLOAT32, 0, st)
        nccl.groupEnd()

    def sync() -> None:
        for d in range(n):
            with cupy.cuda.Device(d):
                streams[d].synchronize()

    for collective in COLLECTIVES:
        for size in sizes:
            nsend, nrecv = elements(collective, size, n)
            if nsend == 0 or nrecv == 0:
                continue
            for d in range(n):
                with cupy.cuda.Device(d):
                    recv[d][:nrecv].fill(0)
            launch(collective, nsend, nrecv)
            sync()
            wrong = _wrong_cupy(collective, recv, nsend, nrecv, n)
            for _ in range(warmup):
                launch(collective, nsend, nrecv)
            sync()
            start = time.perf_counter()
            for _ in range(iters):
                launch(collective, nsend, nrecv)
            sync()
            rows.append(_row(collective, size, n, (time.perf_counter() - start) / iters, wrong))
    return rows, f"CuPy {cupy.__version__}, NCCL {nccl.get_version()}"


def _wrong_cupy(collective: str, recv: list, nsend: int, nrecv: int, n: int) -> int:
    import cupy

    wrong = 0
    for d, buf in enumerate(recv):
        with cupy.cuda.Device(d):
            got = buf[:nrecv]
            if collective in ("all_reduce", "reduce_scatter"):
                wrong += int(cupy.count_nonzero(got != n * (n + 1) / 2))
            elif collective == "all_gather":
                expected = cupy.repeat(cupy.arange(1, n + 1, dtype=cupy.float32), nsend)
                wrong += int(cupy.count_nonzero(got != expected))
            else:
                wrong += int(cupy.count_nonzero(got != 1))
    return wrong


# ---- PyTorch: one spawned process per GPU ----------------------------------------------------------


def _torch_rank(rank: int, n: int, port: int, sizes: list[int], warmup: int, iters: int, out: str) -> None:
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)
    rows = []
    largest = max(sizes) // 4
    send = torch.full((largest,), float(rank + 1), device="cuda", dtype=torch.float32)
    recv = torch.zeros(largest, device="cuda", dtype=torch.float32)

    def launch(collective: str, nsend: int, nrecv: int) -> None:
        if collective == "all_reduce":
            recv[:nsend].copy_(send[:nsend])  # in place, as torch's all_reduce is
            dist.all_reduce(recv[:nsend])
        elif collective == "all_gather":
            dist.all_gather_into_tensor(recv[:nrecv], send[:nsend])
        elif collective == "reduce_scatter":
            dist.reduce_scatter_tensor(recv[:nrecv], send[:nsend])
        else:
            recv[:nsend].copy_(send[:nsend])
            dist.broadcast(recv[:nsend], src=0)

    for collective in COLLECTIVES:
        for size in sizes:
            nsend, nrecv = elements(collective, size, n)
            if nsend == 0 or nrecv == 0:
                continue
            launch(collective, nsend, nrecv)
            torch.cuda.synchronize()
            got = recv[:nrecv]
            if collective in ("all_reduce", "reduce_scatter"):
                expected = torch.full_like(got, n * (n + 1) / 2)
            elif collective == "all_gather":
                expected = torch.arange(1, n + 1, device="cuda", dtype=torch.float32).repeat_interleave(nsend)
            else:
                expected = torch.ones_like(got)
            wrong = torch.tensor([int((got != expected).sum())], device="cuda")
            dist.all_reduce(wrong)
            for _ in range(warmup):
                launch(collective, nsend, nrecv)
            torch.cuda.synchronize()
            dist.barrier()
            start = time.perf_counter()
            for _ in range(iters):
                launch(collective, nsend, nrecv)
            torch.cuda.synchronize()
            elapsed = torch.tensor([(time.perf_counter() - start) / iters], device="cuda", dtype=torch.float64)
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank's time is the operation's
            rows.append(_row(collective, size, n, float(elapsed), int(wrong)))
    if rank == 0:
        version = ".".join(str(v) for v in torch.cuda.nccl.version())
        Path(out).write_text(json.dumps({"rows": rows, "library": f"PyTorch {torch.__version__}, NCCL {version}"}))
    dist.destroy_process_group()


def measure_torch(n: int, sizes: list[int], warmup: int, iters: int, scratch: Path) -> tuple[list[dict], str]:
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = scratch / "torch-rows.json"
    mp.spawn(_torch_rank, args=(n, port, sizes, warmup, iters, str(out)), nprocs=n, join=True)
    data = json.loads(out.read_text())
    return data["rows"], data["library"]


# ---- the table -------------------------------------------------------------------------------------


def _row(collective: str, size: int, n: int, seconds: float, wrong: int) -> dict[str, Any]:
    algbw = collectives.algbw(size, seconds)
    return {
        "collective": collective,
        "size": size,
        "n": n,
        "time_us": seconds * 1e6,
        "algbw_gbs": algbw / 1e9,
        "busbw_gbs": collectives.busbw(collective, size, seconds, n) / 1e9,
        "wrong": wrong,
        **model_row(collective, size, n),
    }


def markdown(doc: dict[str, Any]) -> str:
    lines = [
        f"# NCCL collectives, {doc['date']}, {doc['device']}",
        "",
        doc["note"],
        "",
        f"Library: {doc.get('library', 'n/a')}. busbw as nccl-tests defines it (doc/PERFORMANCE.md). "
        f"Model: {collectives.SOURCE}; {NVLINK_H200.source}.",
        "",
        "| collective | size (B) | n | time (us) | algbw (GB/s) | busbw (GB/s) | #wrong "
        "| model busbw ring (GB/s) | model busbw tree (GB/s) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in doc["rows"]:
        measured = "time_us" in r
        cells = [
            collectives.COLLECTIVE_NAMES[r["collective"]],
            str(r["size"]),
            str(r["n"]),
            f"{r['time_us']:.1f}" if measured else "not measured",
            f"{r['algbw_gbs']:.2f}" if measured else "",
            f"{r['busbw_gbs']:.2f}" if measured else "",
            str(r["wrong"]) if measured else "",
            _gbs(r["model_ring_busbw_gbs"]),
            _gbs(r["model_tree_busbw_gbs"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def figure(doc: dict[str, Any]) -> dict[str, Any] | None:
    try:
        import plotly.graph_objects as go
    except ImportError:
        return None
    fig = go.Figure()
    for collective in COLLECTIVES:
        rows = [r for r in doc["rows"] if r["collective"] == collective]
        if not rows:
            continue
        name = collectives.COLLECTIVE_NAMES[collective]
        sizes = [r["size"] for r in rows]
        if "busbw_gbs" in rows[0]:
            fig.add_trace(go.Scatter(x=sizes, y=[r["busbw_gbs"] for r in rows], mode="lines+markers",
                                     name=f"{name}, measured ({doc['device']})"))  # fmt: skip
        if rows[0]["model_ring_busbw_gbs"] is not None:
            fig.add_trace(go.Scatter(x=sizes, y=[r["model_ring_busbw_gbs"] for r in rows], mode="lines",
                                     line={"dash": "dot"}, name=f"{name}, model (ring, H200 NVLink)"))  # fmt: skip
    fig.update_layout(
        title={"text": f"NCCL bus bandwidth against size, {doc['rows'][0]['n']} GPUs: measured and model"},
        xaxis={"type": "log", "title": "size S (bytes, as nccl-tests counts it)"},
        yaxis={"type": "log", "title": "busbw (GB/s)"},
        meta={
            "source": f"measured {doc['date']} on {doc['device']} ({doc.get('library')}); model: {collectives.SOURCE}"
        },
    )
    return json.loads(fig.to_json())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gpus", type=int, default=0, help="how many GPUs (default: every visible one)")
    parser.add_argument("--smallest", type=int, default=8)
    parser.add_argument("--largest", type=int, default=1 << 30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--backend", choices=["auto", "cupy", "torch"], default="auto")
    parser.add_argument("--replot", type=Path, help="only draw nccl-bench-figure.json from a device's nccl-bench.json")
    parser.add_argument(
        "--smoke", action="store_true", help="one GPU: run the code path with n = 1 (no bus bandwidth: nothing crosses)"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.replot:  # here, where plotly is installed, from what a device brought back
        fig = figure(json.loads(args.replot.read_text()))
        if fig is None:
            print("plotly is not importable here")
            return 1
        (args.out / "nccl-bench-figure.json").write_text(json.dumps(fig))
        print(f"wrote {args.out}/nccl-bench-figure.json")
        return 0
    visible, names = gpu_count()
    n = 1 if args.smoke else args.gpus or visible
    sizes = collectives.message_sizes(args.smallest, args.largest)
    device = f"{n} x {names[0]}" if names else "no GPU"
    doc: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": device,
        "visible_gpus": names,
        "topology": _shell("nvidia-smi", "topo", "-m"),
    }
    status = 0
    if (n < 2 and not args.smoke) or visible < max(n, 1):
        doc["note"] = (
            f"Found {visible} GPU(s) ({', '.join(names) or 'none'}); NCCL bus bandwidth between GPUs needs at least 2 "
            f"(asked for {n}). Nothing was measured: the rows below are the model alone, for 8 GPUs on H200 NVLink."
        )
        doc["rows"] = [{"collective": c, "size": s, "n": 8, **model_row(c, s, 8)} for c in COLLECTIVES for s in sizes]
        status = FEWER_THAN_TWO
    else:
        backend = args.backend
        if backend == "auto":
            try:
                from cupy.cuda import nccl  # noqa: F401

                backend = "cupy"
            except Exception:  # CuPy built without NCCL, or no CuPy: PyTorch bundles its own NCCL
                backend = "torch"
        if backend == "cupy":
            rows, library = measure_cupy(n, sizes, args.warmup, args.iters)
        else:
            rows, library = measure_torch(n, sizes, args.warmup, args.iters, args.out)
        doc.update(rows=rows, library=library, backend=backend)
        wrong = sum(r["wrong"] for r in rows)
        doc["note"] = f"Measured on {device} through {backend}; {wrong} wrong elements in the checks."
        if args.smoke:
            doc["note"] = (
                f"Smoke test of the code path on {device} through {backend} ({wrong} wrong elements): with one GPU "
                "nothing crosses a link, busbw is 0 by nccl-tests' definition, and these times are no measurement "
                "of NVLink or InfiniBand."
            )
        status = 1 if wrong else 0
    (args.out / "nccl-bench.json").write_text(json.dumps(doc, indent=1))
    (args.out / "nccl-bench.md").write_text(markdown(doc))
    fig = figure(doc)
    if fig is not None:
        (args.out / "nccl-bench-figure.json").write_text(json.dumps(fig))
    print(doc["note"])
    print(f"wrote {args.out}/nccl-bench.md and .json")
    return status


if __name__ == "__main__":
    sys.exit(main())
