"""The simulator's memory trace: sectors per request for global accesses, bank-conflict ways for shared ones.

Numba picks the simulator when it is first imported, and the rest of the suite
may import it for a real GPU, so the kernels run in one child process with
NUMBA_ENABLE_CUDASIM=1: this file run as a script writes each kernel to its
own learner file, launches it through `analyse_launch` and prints the reports
as JSON; the tests read them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

KERNELS = {
    "strided_copy": """
        from numba import cuda


        @cuda.jit
        def strided_copy(a, out, stride):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = a[i * stride]
    """,
    "naive_transpose": """
        from numba import cuda


        @cuda.jit
        def naive_transpose(a, out):
            x, y = cuda.grid(2)
            if y < a.shape[0] and x < a.shape[1]:
                out[x, y] = a[y, x]
    """,
    "tiled_transpose": """
        from numba import cuda, float32

        TILE = 32
        WIDTH = TILE + {pad}  # a global, so that Numba sees a constant shape


        @cuda.jit
        def tiled_transpose(a, out):
            tile = cuda.shared.array((TILE, WIDTH), float32)
            tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
            x = cuda.blockIdx.x * TILE + tx
            y = cuda.blockIdx.y * TILE + ty
            for j in range(0, TILE, 8):
                tile[ty + j, tx] = a[y + j, x]
            cuda.syncthreads()
            x = cuda.blockIdx.y * TILE + tx
            y = cuda.blockIdx.x * TILE + ty
            for j in range(0, TILE, 8):
                out[y + j, x] = tile[tx, ty + j]
    """,
    "broadcast": """
        from numba import cuda, float32, float64


        @cuda.jit
        def broadcast(a, wide, out, out_wide, hist):
            s = cuda.shared.array(64, float32)
            w = cuda.shared.array(64, float64)
            i = cuda.threadIdx.x
            s[i] = a[i]
            w[i] = wide[i]
            cuda.syncthreads()
            out[i] = s[0] + a[0]
            out_wide[i] = w[i]
            cuda.atomic.add(hist, i % 4, 1)
    """,
    "out_of_bounds": """
        from numba import cuda


        @cuda.jit
        def out_of_bounds(a):
            a[cuda.grid(1) + 1] = 1.0
    """,
    "one_line": """
        from numba import cuda, float32


        @cuda.jit
        def one_line(out):
            s = cuda.shared.array(32, float32); t = cuda.shared.array(32, float32)  # noqa: E702
            i = cuda.threadIdx.x
            s[i] = 1.0
            t[i] = 2.0
            cuda.syncthreads()
            out[i] = s[i] + t[i]
    """,
}
KERNELS = {name: textwrap.dedent(source).lstrip() for name, source in KERNELS.items()}


def _load(folder: Path, name: str, source: str) -> tuple[Any, str]:
    import importlib.util

    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"learner_{name}_{abs(hash(source))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), str(path)


def run_scenarios(folder: Path) -> dict[str, Any]:
    """Every kernel of this file under the tracer; runs in the child with the simulator on."""
    import numpy as np

    from gpu_worker.science.memtrace import analyse_launch, memory_event

    results: dict[str, Any] = {}

    kernel, path = _load(folder, "strided_copy", KERNELS["strided_copy"])
    for stride in (1, 2, 4, 32):
        a, out = np.arange(1024 * stride, dtype=np.float32), np.zeros(1024, np.float32)
        report = analyse_launch(kernel, 4, 256, (a, out, stride), path)
        results[f"stride_{stride}"] = {"report": report.model_dump(mode="json"), "ok": bool((out == a[::stride]).all())}

    n = 64
    a = np.random.default_rng(1).random((n, n), dtype=np.float32)
    kernel, path = _load(folder, "naive_transpose", KERNELS["naive_transpose"])
    out = np.zeros_like(a)
    report = analyse_launch(kernel, (n // 32, n // 8), (32, 8), (a, out), path)
    results["naive"] = {"report": report.model_dump(mode="json"), "ok": bool((out == a.T).all())}

    for pad in (0, 1):
        source = KERNELS["tiled_transpose"].replace("{pad}", str(pad))
        kernel, path = _load(folder / f"pad{pad}", "tiled_transpose", source)
        out = np.zeros_like(a)
        report = analyse_launch(kernel, (n // 32, n // 32), (32, 8), (a, out), path, source=source)
        results[f"tiled_pad{pad}"] = {"report": report.model_dump(mode="json"), "ok": bool((out == a.T).all())}

    kernel, path = _load(folder, "broadcast", KERNELS["broadcast"])
    a64 = np.arange(64, dtype=np.float32)
    wide, out, out_wide = a64.astype(np.float64), np.zeros(64, np.float32), np.zeros(64, np.float64)
    hist = np.zeros(4, np.int32)
    report = analyse_launch(kernel, 1, 64, (a64, wide, out, out_wide, hist), path)
    ok = bool((out_wide == wide).all() and (hist == 16).all())
    results["broadcast"] = {"report": report.model_dump(mode="json"), "ok": ok}

    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator import kernelapi as sim_kernelapi

    kernel, path = _load(folder, "out_of_bounds", KERNELS["out_of_bounds"])
    try:
        analyse_launch(kernel, 1, 32, (np.zeros(32, np.float32),), path)
        raised = ""
    except IndexError as exc:
        raised = str(exc)
    hooks = [sim_kernel.FakeWithinKernelCUDAArray.__name__, sim_kernelapi.FakeCUDAShared.__name__]
    results["out_of_bounds"] = {"raised": raised, "hooks": hooks}

    kernel, path = _load(folder, "one_line", KERNELS["one_line"])
    out = np.zeros(32, np.float32)
    report = analyse_launch(kernel, 1, 32, (out,), path)
    results["one_line"] = {"report": report.model_dump(mode="json"), "out": out.tolist()}
    results["event"] = memory_event(report).model_dump(mode="json")
    return results


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("learner")
    for sub in ("pad0", "pad1"):
        (folder / sub).mkdir()
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(ROOT)}
    child = subprocess.run(
        [sys.executable, __file__, str(folder)], env=env, capture_output=True, text=True, timeout=240, cwd=ROOT
    )
    assert child.returncode == 0, child.stderr[-4000:]
    return json.loads(child.stdout.splitlines()[-1])


def _rows(result: dict[str, Any], kind: str, access: str) -> list[dict[str, Any]]:
    return [r for r in result["report"]["lines"] if r["kind"] == kind and r["access"] == access]


def _one(result: dict[str, Any], kind: str, access: str) -> dict[str, Any]:
    rows = _rows(result, kind, access)
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.parametrize(("stride", "sectors"), [(1, 4), (2, 8), (4, 16), (32, 32)])
def test_a_strided_load_touches_one_sector_per_32_bytes_spanned(scenarios, stride, sectors):
    result = scenarios[f"stride_{stride}"]
    load = _one(result, "global", "load")
    assert load["sectors_per_request"] == sectors
    assert load["ideal_sectors_per_request"] == 4
    assert load["requests"] == 1024 // 32
    assert load["threads_per_request"] == 32
    assert load["expression"] == "a[i * stride]"
    assert load["severity"] == ("ok" if stride == 1 else "warning")
    assert _one(result, "global", "store")["sectors_per_request"] == 4
    assert result["ok"], "the traced launch must still copy correctly"


def test_the_message_names_the_line_and_what_coalesced_costs(scenarios):
    load = _one(scenarios["stride_32"], "global", "load")
    assert load["line"] == 8
    assert load["message"].startswith("line 8: each warp's load of `a[i * stride]` touches 32 sectors;")
    assert "a coalesced load touches 4" in load["message"]
    assert "32 elements apart" in load["message"]
    assert scenarios["stride_32"]["report"]["summary"] == load["message"]


def test_a_naive_transpose_reads_coalesced_and_writes_32_sectors_per_request(scenarios):
    result = scenarios["naive"]
    assert _one(result, "global", "load")["sectors_per_request"] == 4
    store = _one(result, "global", "store")
    assert store["sectors_per_request"] == 32
    assert store["efficiency"] == 0.125
    assert store["requests"] == 64 * 64 // 32
    assert result["report"]["threads"] == 64 * 64
    assert result["ok"]


def test_reading_a_32_by_32_tile_by_columns_has_32_way_bank_conflicts(scenarios):
    result = scenarios["tiled_pad0"]
    column_read = _one(result, "shared", "load")
    assert column_read["bank_conflict_ways"] == 32
    assert column_read["max_bank_conflict_ways"] == 32
    assert column_read["expression"] == "tile[tx, ty + j]"
    assert "32-way bank conflicts: pad the row ([N][N+1], here [32][33])" in column_read["message"]
    assert _one(result, "shared", "store")["bank_conflict_ways"] == 1  # rows are written along the banks
    global_rows = _rows(result, "global", "load") + _rows(result, "global", "store")
    assert [r["sectors_per_request"] for r in global_rows] == [4, 4]
    assert result["report"]["totals"]["bank_conflicts"] == 4 * 8 * 4 * 31  # blocks x warps x loop trips x extra passes
    assert result["ok"]


def test_padding_the_tile_row_to_33_removes_the_conflicts(scenarios):
    result = scenarios["tiled_pad1"]
    column_read = _one(result, "shared", "load")
    assert column_read["bank_conflict_ways"] == 1
    assert column_read["max_bank_conflict_ways"] == 1
    assert column_read["severity"] == "ok"
    assert result["report"]["totals"]["bank_conflicts"] == 0
    assert result["report"]["summary"].startswith("All ")
    assert result["ok"]


def test_a_broadcast_is_neither_a_bank_conflict_nor_extra_sectors(scenarios):
    result = scenarios["broadcast"]
    shared_loads = {r["expression"]: r for r in _rows(result, "shared", "load")}
    assert shared_loads["s[0]"]["bank_conflict_ways"] == 1
    global_loads = {r["expression"]: r for r in _rows(result, "global", "load")}
    assert global_loads["a[0]"]["sectors_per_request"] == 1
    assert global_loads["a[0]"]["ideal_sectors_per_request"] == 1
    assert global_loads["wide[i]"]["sectors_per_request"] == 8  # 32 doubles are 256 bytes


def test_consecutive_doubles_in_shared_memory_are_served_in_two_phases_without_conflict(scenarios):
    result = scenarios["broadcast"]
    wide = {r["expression"]: r for r in _rows(result, "shared", "load")}["w[i]"]
    assert wide["itemsize"] == 8
    assert wide["bank_conflict_ways"] == 1
    assert result["ok"]


def test_an_atomic_is_one_request_per_warp_not_a_load_and_a_store(scenarios):
    result = scenarios["broadcast"]
    (atomic,) = [r for r in result["report"]["lines"] if r["access"] == "atomic"]
    assert atomic["expression"] == "cuda.atomic.add(hist, i % 4, 1)"
    assert atomic["requests"] == 2
    assert atomic["sectors_per_request"] == 1
    assert result["ok"]


def test_a_learners_error_propagates_and_the_simulator_is_left_as_it_was(scenarios):
    result = scenarios["out_of_bounds"]
    assert "index 32 is out of bounds" in result["raised"]
    assert result["hooks"] == ["FakeWithinKernelCUDAArray", "FakeCUDAShared"]


def test_two_shared_arrays_declared_on_one_line_stay_apart(scenarios):
    result = scenarios["one_line"]
    assert result["out"] == [3.0] * 32  # the plain simulator aliases them and gives 4.0
    stores = {r["expression"] for r in _rows(result, "shared", "store")}
    assert stores == {"s[i]", "t[i]"}


def test_the_report_travels_as_a_memory_event(scenarios):
    from gpu_worker.protocol import Event, Result
    from gpu_worker.science.memtrace_report import MemoryReport

    event = Event.model_validate(scenarios["event"])
    assert event.type == "memory"
    report = MemoryReport.model_validate(scenarios["one_line"]["report"])
    assert report.backend == "sim"
    assert report.totals.shared_requests == 4  # two stores, two loads
    result = Result(submission_id=1, verdict="accepted", backend="sim", device="simulator", memory=report.model_dump())
    assert result.memory is not None and result.memory["lines"]


if __name__ == "__main__":
    print(json.dumps(run_scenarios(Path(sys.argv[1]))))
