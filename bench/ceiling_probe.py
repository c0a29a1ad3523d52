"""Where the FP32 and BF16 calibration anchors come from: the ceilings measured other ways, side by side.

The calibration's FP32 FMA rate reads 7-8 % above the issue's 60.6 TFLOP/s anchor on every H200, and
its BF16 rate once read 0.911 and once 0.949 of 793. This section measures, in one process:

- our FMA kernel (eight independent chains; 128 FFMA, one add, one compare and one branch per
  iteration in its SASS) for the calibration's budget, then back to back for about two seconds, with
  the SM clock and the power read from NVML before, during and after;
- the same loop with one and with two dependent chains per thread (what a plainer FMA kernel gets);
- cuBLAS SGEMM (torch.matmul on float32 8192^3 with TF32 off), a common way to quote "FP32";
- the calibration's BF16 product five times back to back.

    python3 bench/gpu_engine.py --sections ceiling_probe --out "$OUT/probe"
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.standalone import table  # noqa: E402
from gpu_worker.measurement import calibrate  # noqa: E402
from gpu_worker.measurement.device_info import Nvml, device_facts  # noqa: E402

CHAINS = r"""
template <int C>
__device__ void fma_chains(float* out, int iters, float a, float b)
{
    float x[C];
#pragma unroll
    for (int c = 0; c < C; ++c) x[c] = threadIdx.x * 1e-6f + 0.1f * c;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 128 / C; ++k) {
#pragma unroll
            for (int c = 0; c < C; ++c) x[c] = fmaf(x[c], a, b);
        }
    }
    float s = 0.f;
#pragma unroll
    for (int c = 0; c < C; ++c) s += x[c];
    if (s == -1.f) out[0] = s;
}
extern "C" __global__ void fma_1(float* out, int iters, float a, float b) { fma_chains<1>(out, iters, a, b); }
extern "C" __global__ void fma_2(float* out, int iters, float a, float b) { fma_chains<2>(out, iters, a, b); }
"""


def _sustained(module: Any, facts: Any, nvml: Nvml, seconds: float = 2.0) -> dict[str, Any]:
    """The calibration's FMA kernel back to back for `seconds`: its rate per quarter, with clocks and power."""
    import cupy as cp

    out = cp.zeros(1, dtype=cp.float32)
    kernel = module.get_function("fma_loop")
    grid, block, iters = facts.sm_count * 2, 1024, 4096
    flops = 2.0 * grid * block * iters * calibrate.FMA_PER_ITER
    args = (out, cp.int32(iters), cp.float32(0.9999), cp.float32(1e-4))
    samples: list[tuple[float, float, int | None, Any]] = []  # (t, ms, clock, power mW)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        begin.record()
        kernel((grid,), (block,), args)
        end.record()
        end.synchronize()
        ms = cp.cuda.get_elapsed_time(begin, end)
        samples.append((time.perf_counter() - start, ms, nvml.sm_clock(), nvml._call("nvmlDeviceGetPowerUsage")))
    quarters = []
    for q in range(4):
        part = [s for s in samples if q * seconds / 4 <= s[0] < (q + 1) * seconds / 4]
        if part:
            clocks = [s[2] for s in part if s[2]]
            powers = [s[3] / 1000 for s in part if s[3]]
            quarters.append(
                {
                    "tflops": flops / (statistics.median(s[1] for s in part) / 1e3) / 1e12,
                    "sm_clock_mhz": min(clocks) if clocks else None,
                    "power_w": max(powers) if powers else None,
                    "launches": len(part),
                }
            )
    return {"quarters": quarters, "launch_ms": statistics.median(s[1] for s in samples)}


def _chains(facts: Any) -> dict[str, float]:
    import cupy as cp

    from gpu_worker.measurement.timing import measure

    module = cp.RawModule(code=CHAINS, options=("--std=c++17",))
    out = cp.zeros(1, dtype=cp.float32)
    grid, block, iters = facts.sm_count * 2, 1024, 1024
    found = {}
    for name in ("fma_1", "fma_2"):
        kernel = module.get_function(name)

        def launch(stream: Any, kernel: Any = kernel) -> None:
            kernel((grid,), (block,), (out, cp.int32(iters), cp.float32(0.9999), cp.float32(1e-4)), stream=stream)

        r = measure(launch, config=calibrate._config())
        found[name] = 2.0 * grid * block * iters * 128 / (r["median_ms"] / 1e3)
    return found


def _sgemm(n: int = 8192) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.float32) for _ in range(2))
    for _ in range(3):
        torch.matmul(a, b)
    times = []
    for _ in range(10):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        torch.matmul(a, b)
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return 2.0 * n**3 / (statistics.median(times) / 1e3)


def section_ceiling_probe() -> tuple[str, dict[str, Any]]:
    facts = device_facts()
    nvml = Nvml(uuid=facts.uuid)
    module = calibrate.compile_kernels(facts.arch)
    anchors = calibrate.ANCHORS.get(facts.name, {})
    fp32_anchor, bf16_anchor = anchors.get("fp32_flops"), anchors.get("tensor_flops")
    peak = facts.sm_count * 128 * 2 * (nvml.sm_clock_max() or 0) * 1e6  # Hopper: 128 FP32 lanes per SM
    raw: dict[str, Any] = {"peak_fp32_flops": peak, "anchors": anchors}
    rows: list[list[Any]] = []

    def row(what: str, flops: float | None, anchor: float | None, note: str = "") -> None:
        if flops is None:
            rows.append([what, "n/a", "", "", note])
            return
        ratio = f"{flops / anchor:.3f}" if anchor else ""
        rows.append([what, f"{flops / 1e12:.2f}", ratio, f"{flops / peak:.3f}" if peak else "", note])

    raw["calibration_fma"] = calibrate.measure_fma(module, facts)
    row("FMA, 8 chains (the calibration's)", raw["calibration_fma"]["value"], fp32_anchor)
    raw["sustained"] = _sustained(module, facts, nvml)
    for i, q in enumerate(raw["sustained"]["quarters"]):
        note = f"SM clock min {q['sm_clock_mhz']} MHz, power max {q['power_w']} W, {q['launches']} launches"
        row(f"FMA, 8 chains, back to back, quarter {i + 1} of 2 s", q["tflops"] * 1e12, fp32_anchor, note)
    raw["chains"] = _chains(facts)
    row("FMA, 1 dependent chain per thread", raw["chains"]["fma_1"], fp32_anchor)
    row("FMA, 2 chains per thread", raw["chains"]["fma_2"], fp32_anchor)
    raw["sgemm"] = _sgemm()
    row("cuBLAS SGEMM 8192^3 (torch, TF32 off)", raw["sgemm"], fp32_anchor)
    raw["bf16"] = []
    for i in range(5):
        found = calibrate.measure_tensor()
        raw["bf16"].append(found)
        after = f"{nvml.sm_clock()} MHz after"
        row(f"BF16 cuBLAS 8192^3, measurement {i + 1} of 5", found["value"], bf16_anchor, after)
    header = ["measured", "TFLOP/s", "/ anchor", "/ FP32 peak at max clock", "state"]
    text = table(header, rows) + f"\n\nFP32 peak at the maximum SM clock: {peak / 1e12:.2f} TFLOP/s."
    return text, raw


SECTIONS = {"ceiling_probe": section_ceiling_probe}
