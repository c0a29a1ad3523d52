"""Measured ceilings of this worker's GPU slice, cached per GPU and driver.

Rooflines and "% of peak" use what this slice actually does, not datasheet
numbers. At start-up a worker measures five ceilings with small kernels of
its own, timed by `gpu_worker.measurement.timing`:

- device-to-device copy (cudaMemcpyAsync, 1 GiB), counting bytes read + written;
- HBM read (a read-only float4 reduction over 2 GiB);
- shared-memory read bandwidth (conflict-free 16-byte loads, every SM);
- FP32 FMA rate (eight independent FMA chains per thread);
- BF16 tensor rate through cuBLAS (an 8192^3 product on random data, via
  PyTorch; FP16 through `cupy.matmul` where PyTorch is absent), measured first
  and for at most 0.1 s of products: on an H200 that product draws the card to
  its power limit, and back-to-back measurements of 0.35 s each read 1.01, 0.95,
  0.90, 0.90, 0.88 of the anchor as the SM clock fell from 1980 to 1560 MHz
  (docs/benchmarks.md, run 16). The ceiling is the burst rate a learner's run
  sees, as the anchor is (ten products after three warm-ups).

The result is cached as JSON keyed by GPU UUID and driver version, and checked
against anchors measured on the same kind of GPU: a worker more than 10% under
a bandwidth anchor, or whose FP32 or tensor rate is under its band of the chip's
peak at the clock NVML read while it ran (`CLOCK_BANDS`), calls itself
unhealthy and should take itself out of service. Each compute ceiling records
its clock, power draw and throttle reasons.
`python -m gpu_worker calibrate` (or `python -m gpu_worker.measurement.calibrate`) prints them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_worker.measurement import stats
from gpu_worker.measurement.device_info import DeviceFacts, Nvml, device_facts
from gpu_worker.measurement.gpu_lock import GpuLock, worker_gpu_uuid
from gpu_worker.measurement.timing import TimingConfig, measure

CACHE_ENV = "WARPLAB_CACHE_DIR"
CALIBRATION_LOCK_WAIT_S = 300.0  # a timed job holds the lock for seconds; a stuck one is the job timeout's


@dataclass(frozen=True)
class Ceiling:
    """One measured ceiling: its document key, in words, as a short label, and the unit people read it in."""

    key: str
    words: str
    label: str
    unit: str
    scale: float


#: Every ceiling a calibration measures, in the order they are shown (the CLI, heartbeats, the fleet page).
CEILING_INFO = (
    Ceiling("copy_bytes_per_s", "device-to-device copy bandwidth", "copy", "TB/s", 1e12),
    Ceiling("hbm_read_bytes_per_s", "HBM read bandwidth", "HBM read", "TB/s", 1e12),
    Ceiling("shared_bytes_per_s", "shared-memory bandwidth", "shared memory", "TB/s", 1e12),
    Ceiling("fp32_flops", "FP32 FMA rate", "FP32", "TFLOP/s", 1e12),
    Ceiling("tensor_flops", "BF16 tensor rate", "BF16 tensor", "TFLOP/s", 1e12),
)
CEILINGS = tuple(c.key for c in CEILING_INFO)
#: Measured on this project's H200 (SXM, 132 SMs) before; leads for other cards are absent on purpose.
ANCHORS: dict[str, dict[str, float]] = {
    "NVIDIA H200": {
        "hbm_read_bytes_per_s": 4.62e12,
        "copy_bytes_per_s": 4.27e12,
        "shared_bytes_per_s": 32.3e12,
        # 65.3 TFLOP/s at 1980 MHz: 97.6% of 132 SMs x 128 lanes x 2 x 1980 MHz (the old 60.6 was a weaker kernel)
        "fp32_flops": 65.3e12,
        "tensor_flops": 793e12,
    },
}
#: FLOP per clock per SM for the compute ceilings, by compute capability (CUDA C++ Programming Guide,
#: "Arithmetic Instructions"; Hopper whitepaper: 4096 dense BF16 FLOP/clk/SM, so 989 TFLOP/s at 1830 MHz).
PER_CLOCK: dict[str, dict[str, float]] = {
    "sm_90": {"fp32_flops": 256.0, "tensor_flops": 4096.0},
    "sm_80": {"fp32_flops": 128.0, "tensor_flops": 2048.0},
}
#: The share of the peak at the measured clock below which a compute ceiling is unhealthy: our FMA loop
#: reaches 0.976 of it; cuBLAS's 8192^3 BF16 product 0.74-0.80 (its kernels, not the clock, set that).
CLOCK_BANDS = {"fp32_flops": 0.90, "tensor_flops": 0.65}

KERNELS = r"""
extern "C" __global__ void read_sum(const float4* __restrict__ x, long long n4, float* __restrict__ out)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    float acc = 0.f;
    for (; i + 3 * stride < n4; i += 4 * stride) {  // four independent 16-byte loads in flight
        float4 a = __ldcs(x + i), b = __ldcs(x + i + stride);
        float4 c = __ldcs(x + i + 2 * stride), d = __ldcs(x + i + 3 * stride);
        acc += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w))
             + ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));
    }
    for (; i < n4; i += stride) {
        float4 a = __ldcs(x + i);
        acc += (a.x + a.y) + (a.z + a.w);
    }
    if (acc == -1.f) out[0] = acc;  // never true on [0, 1) data; keeps the loads alive
}

extern "C" __global__ void smem_read(float* __restrict__ out, int reps)
{
    __shared__ float4 s[1024];
    const int t = threadIdx.x;
    s[t] = make_float4(t, t + 1, t + 2, t + 3);
    __syncthreads();
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            // t ^ j permutes the low bits within each warp: conflict-free, and not loop-invariant
            const float4 v = s[(t ^ (r * 16 + k)) & 1023];
            acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
        }
    }
    if (acc.x + acc.y + acc.z + acc.w == -1.f) out[0] = acc.x;
}

extern "C" __global__ void fma_loop(float* __restrict__ out, int iters, float a, float b)
{
    float x0 = threadIdx.x * 1e-6f, x1 = x0 + 0.1f, x2 = x0 + 0.2f, x3 = x0 + 0.3f;
    float x4 = x0 + 0.4f, x5 = x0 + 0.5f, x6 = x0 + 0.6f, x7 = x0 + 0.7f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
            x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
        }
    }
    const float s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    if (s == -1.f) out[0] = s;
}
"""
FMA_PER_ITER = 16 * 8


def compile_kernels(arch: str) -> Any:
    import cupy as cp

    return cp.RawModule(code=KERNELS, options=("--std=c++17",))  # CuPy adds -arch=sm_XY of the device itself


def _rate(result: dict[str, Any], work: float) -> float:
    return work / (result["median_ms"] / 1000.0)


_NVML: list[Nvml] = []


def _nvml() -> Nvml:
    """One NVML handle for this process's GPU: its SM clock is read while each ceiling's samples run."""
    if not _NVML:
        _NVML.append(Nvml(uuid=worker_gpu_uuid()))
    return _NVML[0]


def _config(gpu_budget_s: float = 0.35) -> TimingConfig:
    rule = stats.StopRule(rel_precision=0.002, min_samples=10, gpu_budget_s=gpu_budget_s)
    return TimingConfig(flush=False, rule=rule)


TENSOR_BUDGET_S = 0.1  # GPU seconds of products: short enough to stay under the card's power limit


def measure_copy(nbytes: int = 1 << 30) -> dict[str, Any]:
    import cupy as cp

    src = cp.random.random(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)

    def launch(stream: Any) -> None:
        cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, stream.ptr)  # device to device

    r = measure(launch, config=_config(), nvml=_nvml())
    return {"value": _rate(r, 2.0 * nbytes), "median_ms": r["median_ms"], "bytes": 2 * nbytes}


def measure_read(module: Any, facts: DeviceFacts, nbytes: int = 2 << 30) -> dict[str, Any]:
    import cupy as cp

    x = cp.random.random(nbytes // 4, dtype=cp.float32)
    out = cp.zeros(1, dtype=cp.float32)
    kernel = module.get_function("read_sum")
    n4 = nbytes // 16
    best: dict[str, Any] = {"value": 0.0}
    for block, per_sm in ((256, 8), (512, 4), (1024, 2)):
        grid = facts.sm_count * per_sm

        def launch(stream: Any, grid: int = grid, block: int = block) -> None:
            kernel((grid,), (block,), (x, cp.int64(n4), out), stream=stream)

        r = measure(launch, config=_config(), nvml=_nvml())
        value = _rate(r, nbytes)
        if value > best["value"]:
            best = {"value": value, "median_ms": r["median_ms"], "bytes": nbytes, "block": block, "grid": grid}
    return best


def measure_shared(module: Any, facts: DeviceFacts, reps: int = 2048) -> dict[str, Any]:
    import cupy as cp

    out = cp.zeros(1, dtype=cp.float32)
    kernel = module.get_function("smem_read")
    grid, block = facts.sm_count * 2, 1024
    nbytes = grid * block * reps * 16 * 16

    def launch(stream: Any) -> None:
        kernel((grid,), (block,), (out, cp.int32(reps)), stream=stream)

    r = measure(launch, config=_config(), nvml=_nvml())
    return {"value": _rate(r, nbytes), "median_ms": r["median_ms"], "bytes": nbytes}


def measure_fma(module: Any, facts: DeviceFacts, iters: int = 4096) -> dict[str, Any]:
    import cupy as cp

    out = cp.zeros(1, dtype=cp.float32)
    kernel = module.get_function("fma_loop")
    grid, block = facts.sm_count * 2, 1024
    flops = 2.0 * grid * block * iters * FMA_PER_ITER

    def launch(stream: Any) -> None:
        kernel((grid,), (block,), (out, cp.int32(iters), cp.float32(0.9999), cp.float32(1e-4)), stream=stream)

    r = measure(launch, config=_config(), nvml=_nvml())
    return {"value": _rate(r, flops), "median_ms": r["median_ms"], "flops": flops, **_clock(r)}


def _clock(result: dict[str, Any]) -> dict[str, Any]:
    """The SM clock NVML read while the samples ran, and the power state at the end."""
    cold = result.get("cold") or {}
    after = result.get("device_after") or {}
    return {
        "sm_clock_mhz": cold.get("sm_clock_min_mhz"),
        "sm_clock_max_mhz": cold.get("sm_clock_max_mhz"),
        "power_w": after.get("power_w"),
        "throttle_reasons": after.get("throttle_reasons"),
    }


def measure_tensor(n: int = 8192) -> dict[str, Any]:
    """cuBLAS matrix product on random data: BF16 through PyTorch, else FP16 through CuPy."""
    import cupy as cp

    flops = 2.0 * n**3
    try:
        import torch

        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        streams: dict[int, Any] = {}

        def launch(stream: Any) -> None:
            ext = streams.setdefault(stream.ptr, torch.cuda.ExternalStream(stream.ptr))
            with torch.cuda.stream(ext):
                torch.matmul(a, b, out=c)

        torch.cuda.synchronize()
        dtype, via = "bfloat16", "torch.matmul (cuBLAS)"
    except ImportError:
        a16 = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
        b16 = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
        c16 = cp.empty((n, n), dtype=cp.float16)

        def launch(stream: Any) -> None:
            cp.matmul(a16, b16, out=c16)

        dtype, via = "float16", "cupy.matmul (cuBLAS)"
    r = measure(launch, config=_config(TENSOR_BUDGET_S), nvml=_nvml())
    return {
        "value": _rate(r, flops),
        "median_ms": r["median_ms"],
        "flops": flops,
        "dtype": dtype,
        "via": via,
        **_clock(r),
    }


def _cache_file(uuid: str, driver: str, directory: str | None = None) -> Path:
    root = Path(directory or os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "warplab")
    key = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{uuid}-{driver}")
    return root / "ceilings" / f"{key}.json"


def cache_path(facts: DeviceFacts, directory: str | None = None) -> Path:
    return _cache_file(facts.uuid, facts.driver, directory)


def find_cached(uuid: str | None = None, directory: str | None = None) -> dict[str, Any] | None:
    """The cached calibration of this worker's GPU and driver, found through NVML (no CUDA context), or None."""

    uuid = uuid or worker_gpu_uuid()
    driver = Nvml(uuid=uuid).driver_version() if uuid else None
    if not uuid or not driver:
        return None
    path = _cache_file(uuid, driver, directory)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def metrics_ceilings(data: dict[str, Any] | None) -> Any:
    """A calibration document as `gpu_worker.science.metrics.Ceilings` (None when there is none)."""
    if not data:
        return None
    from gpu_worker.science.metrics import Ceilings

    c = data["ceilings"]
    return Ceilings(
        source=f"measured on {data['key']['name']} ({data['key']['uuid']}), {data['measured_at'][:10]}",
        copy_bandwidth=c["copy_bytes_per_s"],
        fp32=c["fp32_flops"],
        bf16_tensor=c.get("tensor_flops"),
    )


def run_calibration(facts: DeviceFacts | None = None) -> dict[str, Any]:
    """Measure every ceiling now (about two seconds of GPU time on an H200)."""
    import cupy as cp

    facts = facts or device_facts()
    nvml = Nvml(uuid=facts.uuid)
    _NVML[:] = [nvml]  # each ceiling's samples read this GPU's SM clock (its health is judged at that clock)
    module = compile_kernels(facts.arch)
    tensor = measure_tensor()  # first, while the card is coolest (see the module's docstring)
    parts = {
        "copy_bytes_per_s": measure_copy(),
        "hbm_read_bytes_per_s": measure_read(module, facts),
        "shared_bytes_per_s": measure_shared(module, facts),
        "fp32_flops": measure_fma(module, facts),
        "tensor_flops": tensor,
    }
    cp.get_default_memory_pool().free_all_blocks()
    return {
        "key": {"uuid": facts.uuid, "driver": facts.driver, "name": facts.name},
        "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "device": facts.as_dict(),
        "state": nvml.state().as_dict(),
        "ceilings": {k: v["value"] for k, v in parts.items()},
        "details": parts,
    }


def load_or_calibrate(facts: DeviceFacts | None = None, refresh: bool = False, directory: str | None = None) -> dict:
    """The cached ceilings of this GPU and driver, measuring them first when absent or asked to.

    The document returned says which: `from_cache` is true when nothing was measured now.
    """
    facts = facts or device_facts()
    path = cache_path(facts, directory)
    if path.exists() and not refresh:
        try:
            data = json.loads(path.read_text())
            if data.get("key", {}).get("uuid") == facts.uuid and data["key"].get("driver") == facts.driver:
                return {**data, "from_cache": True}
        except (OSError, ValueError, KeyError):
            pass
    # a worker measuring again in the background, while it serves, must not overlap a timed job
    with GpuLock(worker_gpu_uuid() or facts.uuid).hold(timeout=CALIBRATION_LOCK_WAIT_S):
        data = run_calibration(facts)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)
    return {**data, "from_cache": False}


def anchors_for(name: str) -> dict[str, float] | None:
    return ANCHORS.get(name)


def peak_at_clock(data: dict[str, Any], key: str) -> float | None:
    """The datasheet peak of a compute ceiling at the SM clock measured while it ran (None if unknown)."""
    device = data.get("device") or {}
    per_clock = PER_CLOCK.get(str(device.get("arch", "")), {}).get(key)
    clock = ((data.get("details") or {}).get(key) or {}).get("sm_clock_mhz")
    sms = device.get("sm_count")
    if not (per_clock and clock and sms):
        return None
    return float(per_clock) * int(sms) * float(clock) * 1e6


def healthy(
    ceilings: dict[str, float],
    anchors: dict[str, float] | None,
    tolerance: float = 0.10,
    document: dict[str, Any] | None = None,
) -> tuple[bool, list[str]]:
    """(in service?, problems).

    A compute ceiling (FP32, tensor) whose clock was measured is judged against the chip's peak at that
    clock (`CLOCK_BANDS`): a card the power limit slowed is slower, not sick. Every other anchored
    ceiling must be within `tolerance` below its anchor.
    """
    if not anchors:
        return True, []
    problems = []
    for key, anchor in anchors.items():
        got = ceilings.get(key)
        peak = peak_at_clock(document, key) if document and key in CLOCK_BANDS else None
        if got is None:
            problems.append(f"{key}: not measured")
        elif peak is not None:
            if got < CLOCK_BANDS[key] * peak:
                clock = document["details"][key]["sm_clock_mhz"] if document else "?"
                problems.append(
                    f"{key}: {got:.4g} is {got / peak:.2f} of the peak at its {clock} MHz clock "
                    f"(healthy: {CLOCK_BANDS[key]:.2f} or more)"
                )
        elif got < (1.0 - tolerance) * anchor:
            problems.append(f"{key}: {got:.4g} is {100 * (1 - got / anchor):.1f}% under the anchor {anchor:.4g}")
    return not problems, problems


def judge(data: dict[str, Any]) -> tuple[bool, list[str]]:
    """`healthy` for a calibration document (its ceilings, its GPU's anchors, its measured clocks)."""
    return healthy(dict(data.get("ceilings") or {}), anchors_for(data.get("key", {}).get("name", "")), document=data)


def ratios(ceilings: dict[str, float], anchors: dict[str, float]) -> dict[str, float]:
    """Measured over anchor, per ceiling."""
    return {k: ceilings[k] / a for k, a in anchors.items() if k in ceilings}


def format_table(data: dict[str, Any]) -> str:
    anchors = anchors_for(data["key"]["name"]) or {}
    lines = [f"{data['key']['name']}  {data['key']['uuid']}  driver {data['key']['driver']}  ({data['measured_at']})"]
    lines.append(f"{'ceiling':<22}{'measured':>12}{'anchor':>10}{'ratio':>8}")
    for ceiling in CEILING_INFO:
        key, unit, scale = ceiling.key, ceiling.unit, ceiling.scale
        got = data["ceilings"][key] / scale
        anchor = anchors.get(key)
        a_txt = f"{anchor / scale:10.2f}" if anchor else f"{'-':>10}"
        r_txt = f"{got * scale / anchor:8.3f}" if anchor else f"{'-':>8}"
        lines.append(f"{key:<22}{got:9.2f} {unit:<3}{a_txt}{r_txt}")
    ok, problems = judge(data)
    lines.append("healthy" if ok else "UNHEALTHY: " + "; ".join(problems))
    return "\n".join(lines)


def main(argv: list[str] | None = None, warmers: Iterable[Callable[[Any, Path], object]] = ()) -> int:
    """The command line; `warmers` compile more trusted kernels into the seed with --warm-kernel-cache."""
    parser = argparse.ArgumentParser(prog="python -m gpu_worker calibrate", description=__doc__.splitlines()[0])
    parser.add_argument("--refresh", action="store_true", help="measure again even if cached")
    parser.add_argument("--json", action="store_true", help="print the cached document as JSON")
    parser.add_argument(
        "--warm-kernel-cache", action="store_true", help="first compile the harness's kernels into the jobs' seed cache"
    )
    args = parser.parse_args(argv)
    if args.warm_kernel_cache:
        import cupy

        from gpu_worker.measurement import kernel_cache

        names = kernel_cache.warm(cupy, also=warmers)
        print(f"kernel cache {kernel_cache.seed_dir()}: {len(names)} file(s)", file=sys.stderr)
    data = load_or_calibrate(refresh=args.refresh)
    print(json.dumps(data, indent=2) if args.json else format_table(data))
    return 0 if judge(data)[0] else 1


if __name__ == "__main__":
    sys.exit(main())
