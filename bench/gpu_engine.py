"""Everything GPU-side of WarpLab in one device call: a markdown table per section, a short table last.

    PYTHONUNBUFFERED=1 python3 bench/gpu_engine.py [--sections a,b,...] [--out DIR]

Sections: env, calibration, stability, occupancy, faults_raw, cold_start, sandbox
(standalone, bench/standalone.py), ceiling_probe (bench/ceiling_probe.py) and engine_vector_add, engine_hostile,
engine_warm (through the real engine and sandbox, bench/engine_sections.py).
Writes results.md and results.json under --out (default $OUT, else ./bench-out).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy  # noqa: E402

if not hasattr(numpy, "row_stack"):  # numba 0.68 with NumPy 2.5
    numpy.row_stack = numpy.vstack  # type: ignore[attr-defined]

os.environ.setdefault("WARPLAB_CACHE_DIR", "/tmp/warplab-cache")  # calibration cache the engine sections read

from bench import standalone  # noqa: E402


def _sandbox() -> tuple[str, dict[str, Any]]:
    from bench import sandbox_probe

    res = sandbox_probe.probe()
    return standalone.table(["item", "value"], [[k, str(v)[:200]] for k, v in res.items()]), res


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _pytest_gpu() -> tuple[str, dict[str, Any]]:
    import subprocess

    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "gpu_worker").glob("test_gpu_*.py"))
    files.append("tests/gpu_worker/test_occupancy_matches_the_driver.py")
    cmd = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", *files]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=400)
    tail = (p.stdout + p.stderr).strip().splitlines()
    summary = [ln for ln in tail if "passed" in ln or "failed" in ln or "error" in ln.lower()][-15:]
    text = f"`{' '.join(cmd[1:])}` → exit {p.returncode} in {time.perf_counter() - t0:.1f} s\n\n```\n"
    text += "\n".join(summary or tail[-15:]) + "\n```"
    return text, {"rc": p.returncode, "tail": tail[-80:]}


def sections() -> dict[str, Any]:
    found: dict[str, Any] = dict(standalone.SECTIONS)
    found["sandbox"] = _sandbox
    found["pytest_gpu"] = _pytest_gpu
    from bench import ceiling_probe

    found.update(ceiling_probe.SECTIONS)
    try:
        from bench import engine_sections

        found.update(engine_sections.SECTIONS)
    except ImportError:
        pass
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="all")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    args = parser.parse_args()
    available = sections()
    wanted = list(available) if args.sections == "all" else args.sections.split(",")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    md = [f"# WarpLab GPU bench ({dt.datetime.now(dt.UTC).isoformat(timespec='seconds')})", ""]
    raw: dict[str, Any] = {}
    short = []
    for name in wanted:
        fn = available.get(name)
        if fn is None:
            short.append(f"{name}: unknown section")
            continue
        t0 = time.perf_counter()
        try:
            text, data = fn()
            ok = True
        except Exception:
            text, data, ok = (
                "```\n" + traceback.format_exc()[-3000:] + "\n```",
                {"error": traceback.format_exc()},
                False,
            )
        wall = time.perf_counter() - t0
        md += [f"## {name} ({wall:.1f} s)", "", text, ""]
        raw[name] = data
        short.append(f"{name}: {'ok' if ok else 'FAILED'} in {wall:.1f} s")
        (out / "results.md").write_text("\n".join(md))
        (out / "results.json").write_text(json.dumps(_jsonable(raw), indent=1, default=str))
        print(f"## {name} ({wall:.1f} s)\n\n{text}\n", flush=True)
    print("\n".join(["# summary", *short]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
