"""Hand-written PTX kernels and a one-call launcher for the executor's tests (imported by the tests beside it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gpu_worker.ptx.abi import arguments
from gpu_worker.ptx.executor import Executor, Launch, Limits
from gpu_worker.ptx.parser import parse
from gpu_worker.ptx.report import MemoryTrace
from gpu_worker.science.memtrace_report import MemoryReport

HEADER = '.version 9.0\n.target sm_90\n.address_size 64\n\t.file\t1 "/tmp/submission.cu"\n'


def kernel(name: str, params: str, body: str, registers: str = "") -> str:
    """A PTX module of one entry; `registers` defaults to plenty of every kind."""
    registers = registers or (
        ".reg .pred %p<16>;\n.reg .b16 %rs<16>;\n.reg .b32 %r<64>;\n.reg .f32 %f<32>;\n.reg .b64 %rd<64>;\n"
        ".reg .f64 %fd<16>;\n"
    )
    return f"{HEADER}.visible .entry {name}(\n{params}\n)\n{{\n{registers}{body}\n}}\n"


def run(
    ptx: str,
    names: Sequence[str],
    values: Sequence[Any],
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    *,
    abi: str = "cuda",
    shared_bytes: int = 0,
    limits: Limits | None = None,
) -> MemoryReport:
    """Launch the module's only kernel on `values` (arrays are written in place); the launch's memory report."""
    module = parse(ptx)
    (entry,) = module.kernels.values()
    params, memory = arguments(entry, abi, list(names), list(values))  # type: ignore[arg-type]
    trace = MemoryTrace()
    executor = Executor(module, entry, params, memory, limits=limits, trace=trace)
    stats = executor.run(Launch(grid, block, shared_bytes))
    return trace.report(grid, block, stats.threads)


def floats(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).random(n, dtype=np.float32)
