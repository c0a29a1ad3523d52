"""A lab's source compiled to PTX and judged on the executor alone: no sandbox, no engine, the lab's own checker.

What the sim backend does for CUDA C++, cut to its core, so every lab's references and samples can be run
through the executor in one fast test (`test_every_lab_sample_gets_its_verdict_on_the_executor`).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpu_worker.backends import nvcc
from gpu_worker.backends.compile_server import types_spec
from gpu_worker.exercise import checker
from gpu_worker.exercise.formula import array_value
from gpu_worker.exercise.inputs import formula_names, make_arguments
from gpu_worker.exercise.labspec import Lab
from gpu_worker.exercise.launch import resolve_launch
from gpu_worker.ptx.abi import arguments
from gpu_worker.ptx.errors import KernelFault, LimitExceeded
from gpu_worker.ptx.executor import Executor, Launch
from gpu_worker.ptx.parser import parse
from gpu_worker.ptx.report import MemoryTrace
from gpu_worker.science.memtrace_report import MemoryReport


@dataclass
class Judged:
    """What the executor made of one source: its verdict, the first failure's words, the first size's report."""

    verdict: str
    message: str = ""
    memory: MemoryReport | None = None
    thread_instructions: int = 0


@functools.cache
def cuda_ptx(source: str) -> str | None:
    with tempfile.TemporaryDirectory() as folder:
        ptx, _ = nvcc.compile_ptx(source, Path(folder))
    return ptx


_NUMBA: dict[tuple[str, str], tuple[str, str] | None] = {}


def numba_sources(items: list[tuple[str, str, list[list[Any]]]]) -> list[tuple[str, str] | None]:
    """(PTX, kernel symbol) of each (source, entry, types_spec), or None where it did not compile; one child process."""
    folder = Path(tempfile.mkdtemp(prefix="numba-ptx-"))
    wanted = []
    for number, (source, entry, types) in enumerate(items):
        path = folder / str(number) / "submission.py"
        path.parent.mkdir()
        path.write_text(source)
        wanted.append([str(path), entry, types])
    batch = Path(__file__).with_name("numba_batch.py")
    answer = subprocess.run(
        [sys.executable, str(batch)], input=json.dumps(wanted), capture_output=True, text=True, check=True
    )
    return [(found["ptx"], found["symbol"]) if found["ok"] else None for found in json.loads(answer.stdout)]


def compile_numba(cases: list[tuple[Lab, str]]) -> None:
    """Numba's PTX and kernel symbol for each (lab, source), made in one child process and kept."""
    items = [(source, lab.spec.entry, types_spec(lab.spec.harness().args_for("numba"))) for lab, source in cases]
    for (lab, source), found in zip(cases, numba_sources(items), strict=True):
        _NUMBA[(lab.spec.slug, source)] = found


def judge(lab: Lab, source: str, language: str = "cuda", seed: int = 7) -> Judged:
    """The verdict the sim tier would give `source`, with the executor running its PTX."""
    if language == "numba":
        if (lab.spec.slug, source) not in _NUMBA:
            compile_numba([(lab, source)])
        compiled = _NUMBA[(lab.spec.slug, source)]
        ptx, symbol = compiled if compiled is not None else (None, "")
    else:
        ptx, symbol = cuda_ptx(source), lab.spec.entry
    if ptx is None:
        return Judged("compile_error")
    module = parse(ptx)
    kernel = module.kernels[symbol]
    harness = lab.spec.harness()
    args = harness.args_for(language)
    judged = Judged("accepted")
    for index, sizes in enumerate(harness.sizes["sim"]):
        values = make_arguments(args, sizes, seed + index)
        config = resolve_launch(harness.launch, sizes)
        params, memory = arguments(kernel, language, [a.name for a in args], [values[a.name] for a in args])  # type: ignore[arg-type]
        trace = MemoryTrace() if index == 0 else None
        executor = Executor(module, kernel, params, memory, trace=trace)
        try:
            stats = executor.run(Launch(tuple(config.grid), tuple(config.block), config.shared_bytes))  # type: ignore[arg-type]
        except (KernelFault, LimitExceeded) as exc:
            return Judged("runtime_error", exc.located())
        judged.thread_instructions += stats.thread_instructions
        if trace is not None:
            judged.memory = trace.report(config.grid, config.block, stats.threads)
        inputs = formula_names(args, sizes, [values[a.name] for a in args])
        for arg in args:
            if arg.role != "out" or arg.name not in harness.expected:
                continue
            expected = np.asarray(array_value(harness.expected[arg.name], inputs))
            info = checker.compare(arg.name, expected, values[arg.name], harness.tolerance, sizes)
            if not info.passed and judged.verdict == "accepted":
                judged.verdict, judged.message = "wrong_answer", info.message
    return judged
