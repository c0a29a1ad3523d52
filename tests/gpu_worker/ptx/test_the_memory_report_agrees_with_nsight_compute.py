"""The executor's sectors per request and bank-conflict ways agree, within 10%, with what Nsight Compute measured
on an H200 for module 2's memory kernels (`bench/memory_kernels.py`, recorded in
`bench/results/2026-12-02-run12-ncu-vs-sim.json`): the same Numba sources, their PTX run here at small sizes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from lab_cases import numba_sources

from bench.memory_kernels import KERNELS
from gpu_worker.ptx.abi import arguments
from gpu_worker.ptx.executor import Executor, Launch
from gpu_worker.ptx.parser import parse
from gpu_worker.ptx.report import MemoryTrace

RECORDED = Path(__file__).resolve().parents[3] / "bench/results/2026-12-02-run12-ncu-vs-sim.json"
MEASURED = json.loads(RECORDED.read_text())["kernels"]
METRICS = {  # ncu's name -> (kind, access, the report's field)
    "global_load_sectors_per_request": ("global", "load", "sectors_per_request"),
    "global_store_sectors_per_request": ("global", "store", "sectors_per_request"),
    "shared_load_ways": ("shared", "load", "bank_conflict_ways"),
    "shared_store_ways": ("shared", "store", "bank_conflict_ways"),
}


def _types(name: str) -> list[list[object]]:
    return [["float32", 1], ["float32", 1], ["int64", 0]] if KERNELS[name].is_copy else [["float32", 2]] * 2


@pytest.fixture(scope="module")
def compiled():
    names = sorted(KERNELS)
    found = numba_sources([(KERNELS[n].source, KERNELS[n].entry, _types(n)) for n in names])
    return dict(zip(names, found, strict=True))


def executor_values(name: str, ptx: str, symbol: str) -> dict[str, float]:
    kernel_spec = KERNELS[name]
    module = parse(ptx)
    kernel = module.kernels[symbol]
    rng = np.random.default_rng(3)
    values = kernel_spec.arguments(kernel_spec.sim_size, lambda shape: rng.random(shape, dtype=np.float32))
    if kernel_spec.is_copy:
        values[2] = np.int64(values[2])
    params, memory = arguments(kernel, "numba", ["x", "y", "z"][: len(values)], values)
    grid, block = kernel_spec.launch(kernel_spec.sim_size)
    trace = MemoryTrace()
    stats = Executor(module, kernel, params, memory, trace=trace).run(Launch((*grid, 1, 1)[:3], (*block, 1, 1)[:3]))  # type: ignore[arg-type]
    assert kernel_spec.correct(values)
    report = trace.report(list(grid), list(block), stats.threads)
    found = {}
    for metric, (kind, access, field) in METRICS.items():
        rows = [r for r in report.lines if (r.kind, r.access) == (kind, access)]
        if rows:
            requests = sum(r.requests for r in rows)
            found[metric] = sum(getattr(r, field) * r.requests for r in rows) / requests
    return found


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_each_kernels_figures_are_within_10_percent_of_nsight_computes(name, compiled):
    ptx, symbol = compiled[name]
    found = executor_values(name, ptx, symbol)
    measured = MEASURED[name]["ncu"]
    compared = [m for m in METRICS if measured.get(m)]  # ncu's shared figures of a kernel with no shared access: 0
    assert sorted(found) == sorted(compared)
    for metric in compared:
        assert math.isclose(found[metric], measured[metric], rel_tol=0.10), (metric, found[metric], measured[metric])
