"""How long a GPU size's inputs take to make on the host: drawn in float64 and cast (before) vs drawn in float32.

    .venv/bin/python bench/input_speed.py [--n 16777213] [--repeats 7]

A GPU size makes its inputs three times per job (the check and two timed input sets), in the measuring
process, before its launches. Prints min / median seconds for each way side by side, alternating them in
one process so both see the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from gpu_worker.exercise.inputs import make_arguments
from gpu_worker.exercise.labspec import find_lab


def float64_then_cast(n: int, seed: int) -> list[np.ndarray]:
    """What `make_arguments` did before: uniform in float64, cast to float32; the output poisoned."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1.0, 1.0, size=n).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, size=n).astype(np.float32)
    return [a, b, np.full(n, np.nan, dtype=np.float32)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16777213)
    parser.add_argument("--repeats", type=int, default=7)
    opts = parser.parse_args()
    args = find_lab("vector-add").spec.harness().args_for("cuda")
    ways = {
        "float64 then cast": lambda seed: float64_then_cast(opts.n, seed),
        "make_arguments (float32)": lambda seed: make_arguments(args, {"n": opts.n}, seed),
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for k in range(opts.repeats):
        for name, make in ways.items():
            t0 = time.perf_counter()
            made = make(k)
            seconds[name].append(time.perf_counter() - t0)
            del made
    print(f"vector-add inputs at n = {opts.n:,}, {opts.repeats} repeats, alternating")
    for name, values in seconds.items():
        print(f"  {name:26s} min {min(values):.3f} s  median {statistics.median(values):.3f} s")
    before, after = (statistics.median(v) for v in seconds.values())
    print(f"  ratio (median): {before / after:.1f}x")


if __name__ == "__main__":
    main()
