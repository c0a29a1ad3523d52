"""One Megatron layer's matrix products on one GPU, per tensor-parallel shard, measured beside the model.

    python3 bench/tp_layer_compute.py --out "$OUT/tp" [--hidden 12288 --seq 2048 --batch 1 --heads 96]

For t = 1, 2, 4, 8 it times, in BF16 through torch.matmul on one GPU, the GEMMs one GPU of a t-way
Megatron layer runs (Shoeybi et al. 2019): QKV (h -> 3h/t), the attention scores and values of its
a/t heads, the output projection (h/t -> h), the MLP (h -> 4h/t -> h); forward and both backward
products (dX and dW) of each. It prints the measured time, the FLOP count (24bsh^2 + 4bs^2h per
layer forward, three times that with the backward, over t) and the model's time at the BF16
datasheet peak, beside the model's four all-reduces of b*s*h*2 bytes over NVLink and InfiniBand
(gpu_worker.multigpu). The compute is measured; the communication is the model (one GPU has no link).
Writes tp-layer.md and tp-layer.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpu_worker.multigpu import tensor_parallel  # noqa: E402
from gpu_worker.multigpu.links import H200_BF16_DENSE_FLOPS, INFINIBAND_NDR, NVLINK_H200  # noqa: E402


def _shard_products(b: int, s: int, h: int, a: int, t: int):
    """(m, k, n, batch) for each forward GEMM one GPU of a t-way layer runs."""
    tokens, d = b * s, h // a
    return [
        (tokens, h, 3 * h // t, 1),  # QKV, column-parallel
        (s, d, s, b * a // t),  # scores Q K^T per head
        (s, s, d, b * a // t),  # scores x V per head
        (tokens, h // t, h, 1),  # output projection, row-parallel
        (tokens, h, 4 * h // t, 1),  # MLP A, column-parallel
        (tokens, 4 * h // t, h, 1),  # MLP B, row-parallel
    ]


def measure(b: int, s: int, h: int, a: int, t: int, reps: int) -> dict:
    import torch

    ops = []
    for m, k, n, batch in _shard_products(b, s, h, a, t):
        x = torch.randn(batch, m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(batch, k, n, device="cuda", dtype=torch.bfloat16)
        dy = torch.randn(batch, m, n, device="cuda", dtype=torch.bfloat16)
        ops.append((x, w, dy))

    def layer() -> None:
        for x, w, dy in ops:
            torch.matmul(x, w)  # forward
            torch.matmul(dy, w.transpose(1, 2))  # dX
            torch.matmul(x.transpose(1, 2), dy)  # dW

    for _ in range(3):
        layer()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        layer()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    flops = sum(6.0 * m * k * n * batch for m, k, n, batch in _shard_products(b, s, h, a, t))
    nvlink = tensor_parallel.layer_step(b, s, h, t, NVLINK_H200, H200_BF16_DENSE_FLOPS)
    infiniband = tensor_parallel.layer_step(b, s, h, t, INFINIBAND_NDR, H200_BF16_DENSE_FLOPS)
    median = statistics.median(times)
    return {
        "t": t,
        "measured_compute_ms": median * 1e3,
        "spread_ms": (max(times) - min(times)) * 1e3,
        "gemm_flops": flops,
        "achieved_tflops": flops / median / 1e12,
        "model_compute_ms": nvlink.compute_time * 1e3,
        "model_allreduce_nvlink_ms": nvlink.comm_time * 1e3,
        "model_allreduce_infiniband_ms": infiniband.comm_time * 1e3,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--hidden", type=int, default=12288)
    parser.add_argument("--heads", type=int, default=96)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    import torch

    args.out.mkdir(parents=True, exist_ok=True)
    rows = [measure(args.batch, args.seq, args.hidden, args.heads, t, args.reps) for t in (1, 2, 4, 8)]
    device = torch.cuda.get_device_name()
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = {
        "date": date,
        "device": device,
        "torch": torch.__version__,
        "shape": vars(args) | {"out": None},
        "rows": rows,
    }
    lines = [
        f"# One Megatron layer's GEMMs per GPU, {date}, {device} (torch {torch.__version__}, BF16)",
        "",
        f"b={args.batch} s={args.seq} h={args.hidden} a={args.heads}; forward + backward GEMMs (softmax, norms and "
        "element-wise work left out). Compute **measured** (CUDA events, median of "
        f"{args.reps}); all-reduce times are the **model** (4 per layer, ring, "
        f"{NVLINK_H200.name} / {INFINIBAND_NDR.name}).",
        "",
        "| t | measured GEMMs (ms) | spread (ms) | TFLOP/s | model compute at peak (ms) "
        "| model all-reduces NVLink (ms) | model all-reduces InfiniBand (ms) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['t']} | {r['measured_compute_ms']:.3f} | {r['spread_ms']:.3f} | {r['achieved_tflops']:.0f} "
            f"| {r['model_compute_ms']:.3f} | {r['model_allreduce_nvlink_ms']:.3f} "
            f"| {r['model_allreduce_infiniband_ms']:.3f} |"
        )
    (args.out / "tp-layer.md").write_text("\n".join(lines) + "\n")
    (args.out / "tp-layer.json").write_text(json.dumps(doc, indent=1))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
