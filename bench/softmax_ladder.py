"""Module 4's abstraction ladder, measured: one row-wise softmax at the rungs this GPU worker has.

    python3 bench/softmax_ladder.py --out-dir DIR      (on a GPU with CuPy; on the device tool: --out-dir "$OUT")

Rungs: the raw CUDA C++ kernels of the module's exercises (labs/content/04-toolchain/softmax-three-pass and
softmax-online, their reference.cu, compiled by CuPy's NVRTC), and the library rung: CuPy's own
reductions and elementwise kernels composed as `exp(x - max) / sum`, five launches. Triton is not
installed on this worker and is left out, said so in the output. Each is checked against NumPy on a
small size, then timed with `cupyx.profiler.benchmark` (CUDA events, median of the repeats) on two
sizes; the bandwidth counts the compulsory 8 bytes per element (read x once, write y once).

Writes DIR/softmax-ladder.json and DIR/softmax-ladder.md, with the device and the date.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LABS = ROOT / "labs" / "content" / "04-toolchain"
SIZES = [(4096, 1000), (16384, 4096)]
THREADS = 128


def _reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _rungs(cp: Any) -> dict[str, Any]:
    def raw(folder: str) -> Any:
        kernel = cp.RawKernel((LABS / folder / "reference.cu").read_text(), "softmax")

        def run(x: Any, y: Any) -> None:
            rows, cols = x.shape
            kernel((rows,), (THREADS,), (x, y, np.int32(rows), np.int32(cols)))

        return run

    def library(x: Any, y: Any) -> None:
        e = cp.exp(x - x.max(axis=1, keepdims=True))
        cp.divide(e, e.sum(axis=1, keepdims=True), out=y)

    return {
        "raw CUDA C++, three passes": raw("softmax-three-pass"),
        "raw CUDA C++, online (two passes)": raw("softmax-online"),
        "library: CuPy reductions + elementwise": library,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args(argv)

    import cupy as cp
    from cupyx.profiler import benchmark

    props = cp.cuda.runtime.getDeviceProperties(0)
    device = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    rng = np.random.default_rng(1234)
    rows_out: list[dict[str, Any]] = []
    for name, run in _rungs(cp).items():
        small = rng.standard_normal((64, 1000)).astype(np.float32)
        y = cp.empty_like(cp.asarray(small))
        run(cp.asarray(small), y)
        error = float(np.max(np.abs(cp.asnumpy(y) - _reference(small))))
        for rows, cols in SIZES:
            x = cp.asarray(rng.standard_normal((rows, cols)).astype(np.float32))
            y = cp.empty_like(x)
            timing = benchmark(run, (x, y), n_repeat=args.repeat, n_warmup=10)
            seconds = float(np.median(timing.gpu_times))
            rows_out.append(
                {
                    "rung": name,
                    "rows": rows,
                    "cols": cols,
                    "median_us": seconds * 1e6,
                    "bandwidth_gbs": 8 * rows * cols / seconds / 1e9,
                    "max_abs_error_vs_numpy": error,
                }
            )
            print(json.dumps(rows_out[-1]), flush=True)
    document = {
        "device": device,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "how": "cupyx.profiler.benchmark, CUDA events, median of the repeats; bandwidth from 8 bytes per element",
        "left_out": "Triton (not installed on this worker)",
        "results": rows_out,
    }
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "softmax-ladder.json").write_text(json.dumps(document, indent=1) + "\n")
    lines = [
        f"# Softmax at each rung: {device}, {document['date']}",
        "",
        f"{document['how']}. Left out: {document['left_out']}.",
        "",
        "| rung | rows x cols | median (us) | GB/s (8 B/element) | max abs error |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['rung']} | {r['rows']} x {r['cols']} | {r['median_us']:.1f} | {r['bandwidth_gbs']:.0f} | "
        f"{r['max_abs_error_vs_numpy']:.1e} |"
        for r in rows_out
    ]
    (out / "softmax-ladder.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
