"""Triton on the `sim` backend: the real compiler in its own process, its PTX run by the executor here.

The compiled kernel's PTX runs on `gpu_worker.ptx`'s executor (through `ptx_sim`), one block of
num_warps * 32 threads per program, with the compiler's dynamic shared memory: the learner's module is
never imported in this process. Only when the executor cannot run that PTX does the fallback below run.

The fallback, Triton's interpreter:
The learner's module is imported in this (sandboxed) process only after
TRITON_INTERPRET=1 is set, so `@triton.jit` gives Triton's interpreted
functions; the interpreter runs every program of the grid one after another
on NumPy, reading and writing the host arrays through their addresses. An
interpreted kernel body is Python, so it only runs once the compile process
(`triton_ptx`, started first, the same file under the same module rules) has
compiled it with Triton's own compiler, which accepts only Triton: a body that
would call Python is its compile error before anything runs.

Triton's interpreter is written for PyTorch tensors; `HostArray` gives a
NumPy array the few methods it calls (`data_ptr`, `untyped_storage`, ...), so
the interpreter works on the arrays in place and copies nothing back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gpu_worker.backends import compile_server, ptx_sim
from gpu_worker.backends.base import Compiled, LearnerError
from gpu_worker.backends.import_errors import import_failure, located
from gpu_worker.backends.learner_module import import_learner_module
from gpu_worker.exercise.diagnostics import exception_text, learner_line
from gpu_worker.exercise.launch import LaunchConfig
from gpu_worker.protocol import ArgSpec, CompileInfo, Diagnostic

ANALYSIS_SECONDS = 120.0


class HostArray:
    """A NumPy array as Triton's interpreter expects a tensor: its address, its dtype, its own storage."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self.dtype = array.dtype

    def data_ptr(self) -> int:
        return int(self.array.ctypes.data)

    def untyped_storage(self) -> HostArray:
        return self

    def cpu(self) -> HostArray:
        return self

    def new_empty(self, *_: Any, **__: Any) -> HostArray:
        return HostArray(self.array)

    def set_(self, storage: HostArray, *_: Any) -> HostArray:
        self.array = storage.array
        return self

    def storage_offset(self) -> int:
        return 0

    def size(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    def stride(self) -> tuple[int, ...]:
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def copy_(self, other: HostArray) -> None:
        if other.array is not self.array:
            self.array[...] = other.array


@dataclass
class InterpretedKernel:
    """A learner's Triton kernel under the interpreter, with the constexprs it is launched with."""

    kernel: Any
    constexprs: dict[str, int] = field(default_factory=dict)
    interpreted: bool = True


def compile_triton(source: str, entry: str, args: list[ArgSpec], workdir: Path, options: dict[str, Any]) -> Compiled:
    """Compile with Triton in the compile process, import here under the interpreter; LearnerError for theirs."""
    path = workdir / "submission.py"
    path.write_text(source)
    found = compile_server.compile_answer(
        "triton_ptx", path, entry, args, (9, 0), timeout=ANALYSIS_SECONDS, tool="Triton", arch="sm_90", triton=options
    )
    info = CompileInfo.model_validate(found["info"])
    facts = found.get("kernel") or {}
    prepared = ptx_sim.prepare(str(found["ptx"]), str(facts.get("name") or entry), "triton", args)
    if isinstance(prepared, ptx_sim.PtxKernel):
        prepared.block = (int(facts.get("num_warps") or 4) * 32, 1, 1)
        prepared.shared_bytes = int(facts.get("shared") or 0)
        prepared.per_access = True
        info.tool = f"{info.tool} (compiled for sm_90) + PTX executor (CPU)"
        info.notes.append(f"run on the CPU: {ptx_sim.DEVICE}")
        info.notes.append(PER_ACCESS_NOTE)
        return Compiled(info=info, handle=prepared, ptx=str(found["ptx"]))
    info.tool = f"{info.tool} (compiled for sm_90) + {TRITON_TOOL}"
    info.notes.append(f"run by Triton's interpreter (the fallback): {prepared}"[:500])
    os.environ["TRITON_INTERPRET"] = "1"  # read when `@triton.jit` runs, below
    try:
        module = import_learner_module(path, language="triton")
    except BaseException as exc:
        raise import_failure(exc, path) from None
    kernel = getattr(module, entry, None)
    if kernel is None or not hasattr(kernel, "__getitem__"):
        raise LearnerError("rejected", f"your module defines no Triton kernel named {entry!r}")
    info.notes.append(TRITON_NOTE)
    constexprs = {str(k): int(v) for k, v in (options.get("constexprs") or {}).items()}
    return Compiled(info=info, handle=InterpretedKernel(kernel, constexprs), ptx=str(found["ptx"]))


def _argument(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return HostArray(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def launch(handle: InterpretedKernel, args: list[Any], config: LaunchConfig, path: str) -> None:
    """Every program of the grid, on the host arrays in place; runtime_error on the learner's line."""
    try:
        handle.kernel[tuple(config.grid)](*(_argument(v) for v in args), **handle.constexprs)
    except MemoryError:
        raise LearnerError(
            "runtime_error", "MemoryError: out of memory while the kernel ran (the job's memory limit)"
        ) from None
    except (Exception, SystemExit) as exc:
        cause = exc.__cause__ or exc
        diagnostic = Diagnostic(line=learner_line(cause, path), message=exception_text(cause))
        raise LearnerError("runtime_error", located(diagnostic), [diagnostic]) from None


TRITON_TOOL = "Triton interpreter (CPU)"
PER_ACCESS_NOTE = (
    "memory report per tl.load and tl.store: Triton's blocked layout gives each thread several neighbouring "
    "elements, loaded a word at a time where alignment is unproven; a warp's loads of one access share their "
    "sectors, so each is counted with the sectors all of them touched"
)
TRITON_NOTE = (
    "run by Triton's interpreter (TRITON_INTERPRET=1) on the CPU, for correctness at small sizes: "
    "not timed, no memory trace; the registers and PTX are the compiled kernel's for sm_90"
)
