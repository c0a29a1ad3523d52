"""Run one CUDA C++ kernel in this process and report how it ends (for the standalone fault probe).

`python bench/fault_probe.py KIND` with KIND one of the sources in bench.kernels
(TRAP, ILLEGAL_ADDRESS, DEVICE_ASSERT, HANG, VECTOR_ADD). Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import kernels  # noqa: E402


def main() -> None:
    kind = sys.argv[1]
    t0 = time.perf_counter()
    import cupy as cp

    cp.cuda.runtime.getDeviceCount()
    src = getattr(kernels, kind)
    n = 1 << 20
    a = cp.random.random(n, dtype=cp.float32)
    b = cp.random.random(n, dtype=cp.float32)
    c = cp.empty(n, dtype=cp.float32)
    out: dict = {"kind": kind, "startup_s": time.perf_counter() - t0}
    try:
        mod = cp.RawModule(code=src, options=("--std=c++17", "-lineinfo"))
        k = mod.get_function("vector_add")
        k(((n + 255) // 256,), (256,), (a, b, c, cp.int32(n)))
        cp.cuda.runtime.deviceSynchronize()
        out["ok"] = bool(cp.allclose(c, a + b))
    except Exception as exc:  # what we want to see: the exception's class and text
        out["error_type"] = f"{type(exc).__module__}.{type(exc).__name__}"
        out["error"] = str(exc)[:300]
        try:
            cp.cuda.runtime.deviceSynchronize()
            out["after"] = "context usable"
        except Exception as exc2:
            out["after"] = f"{type(exc2).__name__}: {str(exc2)[:120]}"
    out["total_s"] = time.perf_counter() - t0
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
