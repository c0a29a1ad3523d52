"""The CPU tier's PTX path: the PTX a compiler made is run by `gpu_worker.ptx`'s executor, not the learner's code.

`prepare` parses the PTX and decodes the entry once, at compile time, so an instruction the executor
does not run is known before any launch (the job is then `not_run`, saying which instruction and
line); `launch` lays out the arguments with the language's ABI, runs the launch on the host arrays
(the outputs land in them, and the engine checks them as it checks any other backend's), and keeps
the first launch's memory report (sectors per request, bank-conflict ways per line). A fault is the
learner's `runtime_error` on the line their compiler's `.loc` names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_worker.backends.base import LearnerError
from gpu_worker.exercise.launch import LaunchConfig
from gpu_worker.protocol import ArgSpec, Diagnostic
from gpu_worker.ptx.abi import Abi, arguments
from gpu_worker.ptx.errors import KernelFault, LimitExceeded, PtxError
from gpu_worker.ptx.executor import Executor, Launch
from gpu_worker.ptx.memory import GlobalMemory
from gpu_worker.ptx.parser import parse
from gpu_worker.ptx.program import Kernel, Module
from gpu_worker.ptx.report import MemoryTrace

DEVICE = "CPU tier: PTX executor (NumPy), sm_90 PTX run on the CPU"


@dataclass
class PtxKernel:
    """A kernel ready to launch on the executor: its module, entry, ABI and the exercise's argument names."""

    module: Module
    kernel: Kernel
    abi: Abi
    names: list[str]
    interpreted: bool = False  # not Triton's interpreter: the sim backend launches this itself


def prepare(ptx: str, symbol: str, abi: Abi, args: list[ArgSpec]) -> PtxKernel | str:
    """The kernel, decoded; or, when the executor cannot run it, why (naming the instruction and line)."""
    try:
        module = parse(ptx)
        kernel = module.kernels[symbol]
        blank = [bytes(p.size) for p in kernel.params]
        Executor(module, kernel, blank, GlobalMemory())  # decodes every instruction: refusals come now
    except KeyError:
        return f"the PTX has no kernel {symbol[:80]}"
    except PtxError as exc:
        return f"the CPU tier's PTX executor cannot run this kernel: {exc.located()}"
    return PtxKernel(module, kernel, abi, [a.name for a in args])


def launch(handle: PtxKernel, values: list[Any], config: LaunchConfig, traced: bool) -> dict[str, Any] | None:
    """Run one launch on the host arrays; the memory report (as JSON data) when `traced`. LearnerError on a fault."""
    params, memory = arguments(handle.kernel, handle.abi, handle.names, values)
    trace = MemoryTrace() if traced else None
    executor = Executor(handle.module, handle.kernel, params, memory, trace=trace)
    try:
        stats = executor.run(Launch(tuple(config.grid), tuple(config.block), config.shared_bytes))  # type: ignore[arg-type]
    except (KernelFault, LimitExceeded) as exc:
        diagnostic = Diagnostic(line=exc.line, message=exc.message)
        raise LearnerError("runtime_error", exc.located(), [diagnostic]) from None
    except PtxError as exc:
        raise LearnerError("not_run", f"the CPU tier's PTX executor cannot run this kernel: {exc.located()}") from None
    if trace is None:
        return None
    return trace.report(list(config.grid), list(config.block), stats.threads).model_dump(mode="json")
