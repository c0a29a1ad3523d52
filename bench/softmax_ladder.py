"""Module 4's abstraction ladder, measured: one row-wise softmax at every rung a student can run on this worker.

    python3 bench/softmax_ladder.py --out-dir DIR     (on a GPU; a device call: bash bench/device_session.sh 240 ladder)

Rungs, from the bottom: the raw CUDA C++ kernels of the module's exercises (labs/content/04-toolchain/
softmax-three-pass and softmax-online, their reference.cu, compiled by CuPy's NVRTC); Triton (bench/ladder/
triton_softmax.py, one program per row); Helion (bench/ladder/helion_softmax.py, compiled by Helion to Triton
with one fixed configuration, no autotuning); the CUTLASS Python DSL (CuTe DSL), which the worker's image
does not have and a device call cannot carry (`CUTLASS_DSL_MISSING`); and two library calls: CuPy's reductions
and elementwise kernels composed as `exp(x - max) / sum`, and `torch.softmax`. A rung whose language does not
import records why and is drawn as "not runnable" on the lesson's figure, never left out.

Each rung is checked against NumPy on a small size, then timed with `cupyx.profiler.benchmark` (CUDA events
on the default stream, which PyTorch, Triton and Helion launch on too; the median of the repeats) on two
sizes. Its bandwidth counts the compulsory 8 bytes per element (read x once, write y once), and its % of the
roof divides that by the GPU's measured copy bandwidth (`gpu_worker calibrate`: the ceiling a student's
`bandwidth_pct` is taken against; its datasheet figure is recorded beside it). Lines of code count the
rung's source without blank lines, comments and docstrings: the .cu file for CUDA C++ (the kernel alone), the
functions a student writes for the Python rungs (the kernel and its launch).

Writes DIR/softmax-ladder.json and DIR/softmax-ladder.md, with the device, the date and the commit.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import importlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from the repository root: gpu_worker, bench.ladder
LABS = ROOT / "labs" / "content" / "04-toolchain"
SIZES = [(4096, 1000), (16384, 4096)]
THREADS = 128
TOLERANCE = 1e-5
NOT_RUNNABLE = "not runnable in the worker's image"
#: Why the CUTLASS DSL rung cannot run: sized by `pip download` of nvidia-cutlass-dsl 4.8.1, CPython 3.12, 2026-12-06.
CUTLASS_DSL_MISSING = (
    "nvidia-cutlass-dsl is not installed there, and its 4.8.1 wheels do not fit a device call's"
    " 64 MiB carry (nvidia-cutlass-dsl-libs-cu13 alone is a 92 MB wheel, 237 MB unpacked)"
)

Prepared = Callable[[], Any]  # one launch; returns the output when it is not y


@dataclass
class Rung:
    """One rung: its name, its tier on the ladder, where its source is, and how to launch it (or why it cannot run)."""

    name: str
    tier: str
    source: str
    loc: int | None  # None: no kernel written at this rung
    prepare: Callable[[Any, Any], Prepared] | None = None
    version: str = ""
    why: str = ""


def code_lines(text: str, comment: str = "//") -> int:
    """Lines that are code: not blank and not a whole-line comment."""
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith(comment))


def python_loc(path: Path, names: list[str]) -> int:
    """Code lines of the named top-level functions, their decorators included and their docstrings not."""
    text = path.read_text()
    lines = text.splitlines()
    total = 0
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            doc = ast.get_docstring(node) is not None and node.body[0]
            skipped = set(range(doc.lineno, doc.end_lineno + 1)) if doc else set()
            body = [lines[i - 1] for i in range(first, node.end_lineno + 1) if i not in skipped]
            total += code_lines("\n".join(body), "#")
    return total


def _torch_views(x: Any, y: Any) -> tuple[Any, Any]:
    import torch

    return torch.from_dlpack(x), torch.from_dlpack(y)  # the same memory, no copy


def _raw(cp: Any, folder: str, name: str) -> Rung:
    path = LABS / folder / "reference.cu"
    kernel = cp.RawKernel(path.read_text(), "softmax")

    def prepare(x: Any, y: Any) -> Prepared:
        rows, cols = x.shape
        return lambda: kernel((rows,), (THREADS,), (x, y, np.int32(rows), np.int32(cols)))

    return Rung(name, "hand-written CUDA C++", str(path.relative_to(ROOT)), code_lines(path.read_text()), prepare,
                f"CuPy {cp.__version__} NVRTC")  # fmt: skip


def _library_cupy(cp: Any, x: Any, y: Any) -> None:
    e = cp.exp(x - x.max(axis=1, keepdims=True))
    cp.divide(e, e.sum(axis=1, keepdims=True), out=y)


def _library_torch(torch: Any, x: Any) -> Any:
    return torch.softmax(x, dim=1)


def _python_rung(name: str, tier: str, module: str, names: list[str]) -> Rung:
    """A rung whose kernel is bench/ladder/<module>.py; its language failing to import is its reason."""
    path = ROOT / "bench" / "ladder" / f"{module}.py"
    rung = Rung(name, tier, str(path.relative_to(ROOT)), python_loc(path, names))
    package = module.split("_")[0]
    try:
        kernel = importlib.import_module(f"bench.ladder.{module}")
        rung.version = f"{package} {metadata.version(package)}"
    except Exception as error:  # ImportError, or a version mismatch raised while importing
        rung.why = f"import {package} failed ({type(error).__name__}: {error})"
        return rung

    def prepare(x: Any, y: Any) -> Prepared:
        tx, ty = _torch_views(x, y)
        return lambda: kernel.softmax(tx, ty)

    rung.prepare = prepare
    return rung


def _cutlass_rung() -> Rung:
    rung = Rung("CUTLASS Python DSL (CuTe DSL)", "templates", "", None)
    if importlib.util.find_spec("cutlass") is None:  # the DSL's import name
        rung.why = CUTLASS_DSL_MISSING
    else:  # the image gained it: say so, rather than time nothing
        rung.why = "nvidia-cutlass-dsl is installed on this worker, but the ladder has no CuTe DSL kernel yet"
    return rung


def rungs(cp: Any) -> list[Rung]:
    """Every rung, from the bottom of the ladder (most written by hand) to the top (a library call)."""
    here = Path(__file__).resolve()
    found = [
        _raw(cp, "softmax-three-pass", "hand-written CUDA C++: three passes"),
        _raw(cp, "softmax-online", "hand-written CUDA C++: online, two passes"),
        _python_rung("Triton: one program per row", "tile language", "triton_softmax", ["softmax_kernel", "softmax"]),
        _python_rung("Helion: PyTorch over tiles", "tile language", "helion_softmax", ["softmax_rows", "softmax"]),
        _cutlass_rung(),
        Rung("library: CuPy reductions + elementwise", "library", f"bench/{here.name}:_library_cupy",
             python_loc(here, ["_library_cupy"]), lambda x, y: lambda: _library_cupy(cp, x, y),
             f"CuPy {cp.__version__}"),
    ]  # fmt: skip
    torch_rung = Rung("library: torch.softmax", "library", f"bench/{here.name}:_library_torch",
                      python_loc(here, ["_library_torch"]))  # fmt: skip
    try:
        import torch
    except ImportError as error:
        torch_rung.why = f"import torch failed ({error})"
        return found + [torch_rung]

    def prepare_torch(x: Any, y: Any) -> Prepared:
        tx = _torch_views(x, y)[0]
        return lambda: _library_torch(torch, tx)

    torch_rung.version = f"PyTorch {torch.__version__}"
    torch_rung.prepare = prepare_torch
    return found + [torch_rung]


def _as_numpy(cp: Any, out: Any) -> np.ndarray:
    return cp.asnumpy(out) if isinstance(out, cp.ndarray) else out.cpu().numpy()


def _reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def roof() -> dict[str, Any]:
    """What a rung's % of the roof is taken against: this GPU's calibrated copy bandwidth; its datasheet's beside."""
    from gpu_worker.measurement.calibrate import load_or_calibrate
    from gpu_worker.science.datasheets import datasheet_for

    data = load_or_calibrate()
    sheet = datasheet_for(data["key"]["name"])
    return {
        "bytes_per_s": data["ceilings"]["copy_bytes_per_s"],
        "source": f"device-to-device copy bandwidth measured by gpu_worker calibrate, {data['measured_at'][:10]}",
        "datasheet_bytes_per_s": sheet.memory_bandwidth if sheet else None,
        "datasheet": sheet.name if sheet else None,
    }


def measure(cp: Any, rung: Rung, peak: float, repeat: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The rung's summary and one row per size; a rung that fails to run or check says why."""
    summary = {"rung": rung.name, "tier": rung.tier, "source": rung.source, "loc": rung.loc, "version": rung.version}
    if rung.prepare is None:
        return {**summary, "status": NOT_RUNNABLE, "why": rung.why}, []
    from cupyx.profiler import benchmark

    rng = np.random.default_rng(1234)
    rows_out: list[dict[str, Any]] = []
    try:
        small = rng.standard_normal((64, 1000)).astype(np.float32)
        x = cp.asarray(small)
        y = cp.empty_like(x)
        out = rung.prepare(x, y)()
        error = float(np.max(np.abs(_as_numpy(cp, y if out is None else out) - _reference(small))))
        if not error <= TOLERANCE:
            return {**summary, "status": "wrong", "why": f"max abs error {error:.1e} against NumPy"}, []
        for rows, cols in SIZES:
            x = cp.asarray(rng.standard_normal((rows, cols)).astype(np.float32))
            y = cp.empty_like(x)
            timing = benchmark(rung.prepare(x, y), (), n_repeat=repeat, n_warmup=10)
            seconds = float(np.median(timing.gpu_times))
            bandwidth = 8 * rows * cols / seconds
            rows_out.append({"rung": rung.name, "rows": rows, "cols": cols, "median_us": seconds * 1e6,
                             "bandwidth_gbs": bandwidth / 1e9, "roof_pct": 100 * bandwidth / peak,
                             "max_abs_error_vs_numpy": error})  # fmt: skip
            print(json.dumps(rows_out[-1]), flush=True)
    except Exception as error:  # a rung that breaks costs its row, never the ladder
        return {**summary, "status": "failed", "why": f"{type(error).__name__}: {str(error)[:300]}"}, rows_out
    return {**summary, "status": "ran", "max_abs_error_vs_numpy": error}, rows_out


def markdown(document: dict[str, Any]) -> str:
    lines = [
        f"# Softmax at each rung: {document['device']}, {document['date']}",
        "",
        f"{document['how']}. Roof: {document['roof']['bytes_per_s'] / 1e9:.0f} GB/s, {document['roof']['source']}.",
        "",
        "| rung | lines | status | rows x cols | median (us) | GB/s (8 B/element) | % of roof |",
        "|---|---|---|---|---|---|---|",
    ]
    for rung in document["rungs"]:
        measured = [r for r in document["results"] if r["rung"] == rung["rung"]]
        loc = rung["loc"] or "-"
        lines += [
            f"| {rung['rung']} | {loc} | {rung['status']} | {r['rows']} x {r['cols']} | {r['median_us']:.1f} "
            f"| {r['bandwidth_gbs']:.0f} | {r['roof_pct']:.0f} |"
            for r in measured
        ] or [f"| {rung['rung']} | {loc} | {rung['status']}: {rung.get('why', '')} | | | | |"]
    return "\n".join(lines) + "\n"


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h"], capture_output=True,
                              text=True, timeout=10).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args(argv)

    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    device = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    peak = roof()
    summaries: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for rung in rungs(cp):
        summary, rows = measure(cp, rung, peak["bytes_per_s"], args.repeat)
        summaries.append(summary)
        results += rows
        if summary["status"] != "ran":
            print(f"{rung.name}: {summary['status']}: {summary['why']}", flush=True)
    document = {
        "device": device,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": _commit(),
        "how": "cupyx.profiler.benchmark, CUDA events, median of the repeats; bandwidth from 8 bytes per element",
        "roof": peak,
        "sizes": SIZES,
        "rungs": summaries,
        "results": results,
    }
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "softmax-ladder.json").write_text(json.dumps(document, indent=1) + "\n")
    (out / "softmax-ladder.md").write_text(markdown(document))
    print(markdown(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())
