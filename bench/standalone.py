"""GPU benchmark sections that need no engine: environment, calibration, timing stability, occupancy, probes.

Each `section_*` function returns (markdown table, raw dict). `bench/gpu_engine.py`
runs them together with the engine sections in one device call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import kernels  # noqa: E402
from gpu_worker.measurement import calibrate, stats  # noqa: E402
from gpu_worker.measurement.device_info import Nvml, device_facts  # noqa: E402
from gpu_worker.measurement.timing import TimingConfig, measure  # noqa: E402


def table(header: list[str], rows: list[list[Any]]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def section_env() -> tuple[str, dict[str, Any]]:
    info: dict[str, Any] = {"python": sys.version.split()[0]}
    for mod in ("cupy", "numba", "numba.cuda", "triton", "torch", "pydantic", "yaml", "pynvml", "numpy"):
        try:
            m = __import__(mod, fromlist=["_"])
            info[mod] = getattr(m, "__version__", "ok")
        except Exception as exc:
            info[mod] = f"MISSING ({type(exc).__name__}: {exc})"[:120]
    try:
        smi = subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,temperature.gpu,"
                "compute_mode,mig.mode.current",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
            timeout=20,
        )
        info["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
    except Exception as exc:
        info["nvidia_smi"] = f"failed: {exc}"
    facts = device_facts()
    info["facts"] = facts.as_dict()
    nv = Nvml(uuid=facts.uuid)
    info["nvml_ok"] = nv.ok
    info["state"] = nv.state().as_dict()
    rows = [[k, v if not isinstance(v, dict) else json.dumps(v)[:160]] for k, v in info.items()]
    return table(["item", "value"], rows), info


def _compile(src: str, name: str, arch: str) -> Any:
    import cupy as cp

    return cp.RawModule(code=src, options=("--std=c++17", "-lineinfo")).get_function(name)


def stability_kernels(arch: str, sm_count: int) -> dict[str, tuple[Any, float, float]]:
    """name -> (launch(stream), bytes, flops)."""
    import cupy as cp

    out: dict[str, tuple[Any, float, float]] = {}
    nbytes = 1 << 30
    src = cp.random.random(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    out["copy 1 GiB (memcpy)"] = (
        lambda s: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, s.ptr),
        2.0 * nbytes,
        0.0,
    )
    vadd = _compile(kernels.VECTOR_ADD, "vector_add", arch)
    for logn in (24,):
        n = 1 << logn
        a, b, c = (cp.random.random(n, dtype=cp.float32) for _ in range(3))
        out[f"vector-add 2^{logn}"] = (
            lambda s, a=a, b=b, c=c, n=n: vadd(((n + 255) // 256,), (256,), (a, b, c, cp.int32(n)), stream=s),
            12.0 * n,
            float(n),
        )
    mod = calibrate.compile_kernels(arch)
    fma = mod.get_function("fma_loop")
    o = cp.zeros(1, dtype=cp.float32)
    iters, grid = 256, sm_count * 2
    out["fma-bound (fp32)"] = (
        lambda s: fma((grid,), (1024,), (o, cp.int32(iters), cp.float32(0.9999), cp.float32(1e-4)), stream=s),
        0.0,
        2.0 * grid * 1024 * iters * calibrate.FMA_PER_ITER,
    )
    tr = _compile(kernels.TRANSPOSE, "transpose", arch)
    m = 8192
    tin = cp.random.random((m, m), dtype=cp.float32)
    tout = cp.empty_like(tin)
    out["smem transpose 8192^2"] = (
        lambda s: tr((m // 32, m // 32), (32, 8), (tin, tout, cp.int32(m)), stream=s),
        8.0 * m * m,
        0.0,
    )
    return out


def hot_kernels(arch: str) -> dict[str, tuple[Any, float, float]]:
    import cupy as cp

    vadd = _compile(kernels.VECTOR_ADD, "vector_add", arch)
    out = {}
    for logn in (16, 18, 20, 22):
        n = 1 << logn
        a, b, c = (cp.random.random(n, dtype=cp.float32) for _ in range(3))
        out[f"vector-add 2^{logn}"] = (
            lambda s, a=a, b=b, c=c, n=n: vadd(((n + 255) // 256,), (256,), (a, b, c, cp.int32(n)), stream=s),
            12.0 * n,
            float(n),
        )
    return out


def _do_bench(launch: Any) -> float:
    import cupy as cp
    import torch
    import triton.testing

    ext = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    return float(triton.testing.do_bench(lambda: launch(ext), return_mode="median"))


def section_stability(repeats: int = 10) -> tuple[str, dict[str, Any]]:
    facts = device_facts()
    nvml = Nvml(uuid=facts.uuid)
    raw: dict[str, Any] = {}
    rows = []
    for name, (launch, nbytes, flops) in stability_kernels(facts.arch, facts.sm_count).items():
        medians, ratios, gpu_s, ns, dropped = [], [], [], [], 0
        for _ in range(repeats):
            r = measure(launch, nvml=nvml, hot=False)
            medians.append(r["median_ms"])
            gpu_s.append(r["gpu_seconds"])
            ns.append(r["cold"]["summary"]["n"])
            dropped += r["cold"]["dropped_batches"]
            try:
                ratios.append(r["median_ms"] / _do_bench(launch))
            except Exception as exc:
                raw.setdefault("do_bench_error", repr(exc)[:200])
        med = stats.median(medians)
        rate = f"{nbytes / med / 1e6:.0f} GB/s" if nbytes else f"{flops / med / 1e9:.1f} TFLOP/s"
        raw[name] = {"medians_ms": medians, "ratios": ratios, "gpu_s": gpu_s, "n": ns, "dropped_batches": dropped}
        rows.append(
            [
                name,
                med * 1000,
                rate,
                f"{100 * stats.cv(medians):.3f}%",
                f"{stats.median(ratios):.4f} [{min(ratios):.4f}, {max(ratios):.4f}]" if ratios else "n/a",
                f"{max(gpu_s):.3f}",
                f"{min(ns)}-{max(ns)}",
                dropped,
            ]
        )
    text = table(
        [
            "kernel",
            "median µs",
            "rate",
            "CV of median (10×)",
            "ours/do_bench median [min,max]",
            "max GPU s/measure",
            "samples",
            "dropped batches",
        ],
        rows,
    )
    hot_rows = []
    for name, (launch, nbytes, _flops) in hot_kernels(facts.arch).items():
        hot_meds, cold_meds, gpu_s = [], [], []
        for _ in range(repeats):
            r = measure(launch, nvml=nvml, hot=True)
            hot_meds.append(r["hot"]["summary"]["median"])
            cold_meds.append(r["median_ms"])
            gpu_s.append(r["gpu_seconds"])
        raw[f"hot {name}"] = {
            "hot_ms": hot_meds,
            "cold_ms": cold_meds,
            "gpu_s": gpu_s,
            "k": r["hot"]["launches_per_replay"],
        }
        hm = stats.median(hot_meds)
        hot_rows.append(
            [
                name,
                hm * 1000,
                f"{100 * stats.cv(hot_meds):.3f}%",
                stats.median(cold_meds) * 1000,
                f"{100 * stats.cv(cold_meds):.2f}%",
                f"{nbytes / hm / 1e6:.0f} GB/s",
                r["hot"]["launches_per_replay"],
                f"{max(gpu_s):.3f}",
            ]
        )
    text += "\n\nHot (CUDA-graph replay) numbers for small kernels:\n\n" + table(
        [
            "kernel",
            "hot median µs",
            "hot CV (10×)",
            "cold median µs",
            "cold CV",
            "hot rate",
            "K per graph",
            "max GPU s/measure",
        ],
        hot_rows,
    )
    return text, raw


def section_calibration() -> tuple[str, dict[str, Any]]:
    import cupy as cp

    facts = device_facts()
    t0 = time.perf_counter()
    data = calibrate.load_or_calibrate(facts, refresh=True)  # also fills the cache the engine reads
    wall = time.perf_counter() - t0
    anchors = calibrate.anchors_for(facts.name) or {}
    rows = []
    for key in calibrate.CEILINGS:
        got = data["ceilings"][key]
        a = anchors.get(key)
        rows.append(
            [
                key,
                got / 1e12,
                a / 1e12 if a else "-",
                f"{got / a:.3f}" if a else "-",
                ("yes" if abs(got / a - 1) <= 0.05 else "NO") if a else "-",
            ]
        )
    # Plain copy kernels (one float, or one float4, per thread) against the calibrated copy ceiling.
    n = 1 << 28
    src = cp.random.random(n, dtype=cp.float32)
    dst = cp.empty_like(src)
    ref_bw = {}
    for name, count in (("copy_f32", n), ("copy_f32x4", n // 4)):
        k = _compile(kernels.COPY, name, facts.arch)
        r = measure(
            lambda s, k=k, count=count: k(((count + 255) // 256,), (256,), (src, dst, cp.int64(count)), stream=s),
            config=TimingConfig(flush=False),
        )
        ref_bw[name] = 8.0 * n / (r["median_ms"] / 1e3)
        frac = ref_bw[name] / data["ceilings"]["copy_bytes_per_s"]
        target = "yes" if frac >= 0.9 else "NO"
        rows.append([f"reference copy kernel {name} (1 GiB)", ref_bw[name] / 1e12, "-", f"{frac:.3f} of copy", target])
    ok, problems = calibrate.healthy(data["ceilings"], anchors)
    text = table(["ceiling (x1e12 per s)", "measured", "anchor", "ratio", "within ±5% / ≥90%"], rows)
    text += f"\n\nhealthy (10% rule): {ok} {problems or ''}; calibration wall time {wall:.1f} s"
    return text, {"calibration": data, "reference_copy_bytes_per_s": ref_bw, "wall_s": wall}


def section_occupancy() -> tuple[str, dict[str, Any]]:
    import cupy as cp

    facts = device_facts()
    try:
        from gpu_worker.science import occupancy as occ_mod
    except ImportError:
        occ_mod = None
    srcs = {
        "vector_add": kernels.VECTOR_ADD,
        "transpose": kernels.TRANSPOSE,
        "dyn_reduce": kernels.DYN_SMEM,
        "reg_heavy": kernels.REG_HEAVY,
    }
    drv = cp.cuda.driver
    rows, raw, agree, total = [], [], 0, 0
    for name, src in srcs.items():
        k = _compile(src, name, facts.arch)
        attrs = k.attributes
        regs, smem = attrs["num_regs"], attrs["shared_size_bytes"]
        for block in (64, 128, 256, 512, 1024):
            if block > attrs["max_threads_per_block"]:
                continue
            for dyn in (0, 16384, 49152):
                if dyn and name != "dyn_reduce":
                    continue
                if dyn + smem > 48 * 1024:
                    k.max_dynamic_shared_size_bytes = dyn
                gpu = drv.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, block, dyn)
                off: Any = None
                if occ_mod is not None:
                    try:
                        res = occ_mod.occupancy_from_kernel_attrs(facts.arch, block, k.attributes, dyn)
                        off = res.active_blocks_per_sm
                    except Exception as exc:
                        off = f"error: {exc}"[:60]
                total += 1
                agree += off == gpu
                raw.append(
                    {
                        "kernel": name,
                        "block": block,
                        "dyn": dyn,
                        "regs": regs,
                        "smem": smem,
                        "gpu": gpu,
                        "offline": off if isinstance(off, (int, str)) else repr(off),
                    }
                )
                rows.append([name, regs, smem, block, dyn, gpu, off if off is not None else "(no occupancy.py)"])
    text = table(["kernel", "regs", "static smem", "block", "dyn smem", "driver blocks/SM", "offline"], rows)
    text += f"\n\nagreement: {agree}/{total}" if occ_mod else "\n\ngpu_worker/occupancy.py absent: driver values only"
    return text, {"rows": raw, "agree": agree, "total": total}


def section_fault_probe() -> tuple[str, dict[str, Any]]:
    rows, raw = [], []
    for kind, limit in (
        ("VECTOR_ADD", 60),
        ("TRAP", 60),
        ("ILLEGAL_ADDRESS", 60),
        ("FAR_ADDRESS", 60),
        ("DEVICE_ASSERT", 60),
        ("DEVICE_ASSERT_DECL", 60),
        ("HANG", 8),
        ("VECTOR_ADD", 60),
    ):
        t0 = time.perf_counter()
        try:
            p = subprocess.run(
                [sys.executable, str(ROOT / "bench" / "fault_probe.py"), kind],
                capture_output=True,
                text=True,
                timeout=limit,
            )
            line = (p.stdout.strip().splitlines() or ["{}"])[-1]
            res = json.loads(line) if line.startswith("{") else {"stdout": p.stdout[-200:], "stderr": p.stderr[-300:]}
            res["rc"] = p.returncode
        except subprocess.TimeoutExpired:
            res = {"kind": kind, "timeout": limit}
        res["wall_s"] = time.perf_counter() - t0
        raw.append(res)
        rows.append(
            [
                kind,
                res.get("ok", ""),
                res.get("error_type", ""),
                str(res.get("error", res.get("timeout", "")))[:90],
                res.get("after", ""),
                f"{res['wall_s']:.2f}",
            ]
        )
    return table(["kernel", "ok", "exception", "message", "after", "wall s"], rows), {"runs": raw}


def section_cold_start() -> tuple[str, dict[str, Any]]:
    """Time-to-first-result of a fresh process: CuPy import + context, NVRTC compile with empty vs warm cache."""
    import tempfile

    code = (
        "import time,sys;t0=time.perf_counter();import cupy as cp;cp.cuda.runtime.free(cp.cuda.runtime.malloc(1));"
        "t1=time.perf_counter();k=cp.RawModule(code=open(sys.argv[1]).read(),options=('--std=c++17',"
        "'-lineinfo')).get_function('vector_add');n=1<<20;a=cp.ones(n,dtype=cp.float32);c=cp.empty_like(a);"
        "k(((n+255)//256,),(256,),(a,a,c,cp.int32(n)));cp.cuda.runtime.deviceSynchronize();t2=time.perf_counter();"
        "print(t1-t0,t2-t1,t2-t0)"
    )
    ncode = (
        "import time;t0=time.perf_counter();import numpy;numpy.row_stack=getattr(numpy,'row_stack',numpy.vstack);"
        "from numba import cuda;import cupy as cp;cp.cuda.runtime.free(cp.cuda.runtime.malloc(1))\n"
        "t1=time.perf_counter()\n"
        "@cuda.jit\ndef f(a,c):\n i=cuda.grid(1)\n if i<c.size: c[i]=a[i]+a[i]\n"
        "n=1<<20;a=cp.ones(n,dtype=cp.float32);c=cp.empty_like(a);f[(n+255)//256,256](a,c);cuda.synchronize();"
        "t2=time.perf_counter();print(t1-t0,t2-t1,t2-t0)"
    )
    rows, raw = [], {}
    with tempfile.TemporaryDirectory() as d:
        srcf = Path(d) / "k.cu"
        srcf.write_text(kernels.VECTOR_ADD)
        for label, cache in (
            ("cuda, empty kernel cache", "empty"),
            ("cuda, warm kernel cache", "warm"),
            ("cuda, warm kernel cache (again)", "warm"),
        ):
            env = dict(os.environ, CUPY_CACHE_DIR=str(Path(d) / cache))
            if cache == "empty":
                env["CUPY_CACHE_DIR"] = str(Path(d) / "warm")  # first run fills the cache the next ones reuse
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", code, str(srcf)], capture_output=True, text=True, env=env)
            wall = time.perf_counter() - t0
            parts = [float(x) for x in p.stdout.split()] if p.returncode == 0 else [float("nan")] * 3
            raw[label] = {"import_ctx_s": parts[0], "compile_run_s": parts[1], "wall_s": wall, "err": p.stderr[-300:]}
            rows.append([label, parts[0], parts[1], wall])
        # as a spare's compile process does before its job: Numba's one-time costs paid before t1
        warmed = ncode.replace("\nt1=", "\nimport gpu_worker.backends.numba_ptx as g;g.warm_compiler()\nt1=", 1)
        for label, program in (
            ("numba, fresh process", ncode),
            ("numba, fresh process (again)", ncode),
            ("numba, fresh process, compiler warmed first", warmed),
        ):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT)
            wall = time.perf_counter() - t0
            parts = [float(x) for x in p.stdout.split()] if p.returncode == 0 else [float("nan")] * 3
            raw[label] = {"import_ctx_s": parts[0], "compile_run_s": parts[1], "wall_s": wall, "err": p.stderr[-300:]}
            rows.append([label, parts[0], parts[1], wall])
    return table(["process", "import + context s", "compile + first run s", "wall s"], rows), raw


def section_numba_probe() -> tuple[str, dict[str, Any]]:
    """numba-cuda next to CuPy: attributes, driver occupancy, launch on a CuPy stream, graph capture."""
    import cupy as cp
    from numba import cuda

    from bench.kernels import NUMBA_VECTOR_ADD

    ns: dict[str, Any] = {}
    exec(compile(NUMBA_VECTOR_ADD, "<numba>", "exec"), ns)
    k = ns["vector_add"]
    n = 1 << 24
    a, b, c = (cp.random.random(n, dtype=cp.float32) for _ in range(3))
    da, db, dc = (cuda.as_cuda_array(x, sync=False) for x in (a, b, c))
    grid = (n + 255) // 256
    k[grid, 256](da, db, dc)
    cuda.synchronize()
    ok = bool(cp.allclose(c, a + b))
    sig = next(iter(k.overloads))
    ov = k.overloads[sig]
    info = {
        "correct": ok,
        "regs": ov.regs_per_thread,
        "shared": ov.shared_mem_per_block,
        "local": ov.local_mem_per_thread,
        "max_threads": ov.max_threads_per_block,
    }
    ctx = cuda.current_context()
    info["occupancy_256"] = ctx.get_active_blocks_per_multiprocessor(ov._codelibrary.get_cufunc(), 256, 0)
    streams: dict[int, Any] = {}

    def launch(s: Any) -> None:
        ns_ = streams.setdefault(s.ptr, cuda.external_stream(s.ptr))
        k[grid, 256, ns_](da, db, dc)

    r = measure(launch, hot=True)
    info["cupy_vector_add_attributes"] = dict(_compile(kernels.VECTOR_ADD, "vector_add", "").attributes)
    info["cold_median_us"] = r["median_ms"] * 1000
    hot = r["hot"] or {}
    info["hot"] = hot.get("summary", {}).get("median", hot.get("error"))
    info["gbps"] = 12.0 * n / (r["median_ms"] / 1e3) / 1e9
    return table(["item", "value"], [[kk, vv] for kk, vv in info.items()]), info


SECTIONS = {
    "numba_probe": section_numba_probe,
    "env": section_env,
    "calibration": section_calibration,
    "stability": section_stability,
    "occupancy": section_occupancy,
    "faults_raw": section_fault_probe,
    "cold_start": section_cold_start,
}
