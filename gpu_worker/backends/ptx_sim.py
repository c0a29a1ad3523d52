"""The CPU tier's PTX path: the PTX a compiler made is run by `gpu_worker.ptx`'s executor, not the learner's code.

`prepare` parses the PTX and decodes the entry once, at compile time, so an instruction the executor
does not run is known before any launch (the job is then `not_run`, saying which instruction and
line); `launch` lays out the arguments with the language's ABI, runs the launch on the host arrays
(the outputs land in them, and the engine checks them as it checks any other backend's), and keeps
the first launch's memory report (sectors per request, bank-conflict ways per line). A fault is the
learner's `runtime_error` on the line their compiler's `.loc` names.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from gpu_worker.backends import SIM_DEVICE
from gpu_worker.backends.base import LearnerError
from gpu_worker.backends.ptxas import MAX_PTX_CHARS, kernel_symbol
from gpu_worker.exercise.launch import LaunchConfig
from gpu_worker.protocol import ArgSpec, Diagnostic
from gpu_worker.ptx.abi import Abi, arguments
from gpu_worker.ptx.errors import KernelFault, LimitExceeded, PtxError
from gpu_worker.ptx.executor import Executor, Launch
from gpu_worker.ptx.memory import GlobalMemory
from gpu_worker.ptx.parser import parse
from gpu_worker.ptx.program import Kernel, Module
from gpu_worker.ptx.refused import Refused
from gpu_worker.ptx.report import MemoryTrace

DEVICE = SIM_DEVICE


@dataclass
class PtxKernel:
    """A kernel ready to launch on the executor: its module, entry, ABI and the exercise's argument names."""

    module: Module
    kernel: Kernel
    abi: Abi
    names: list[str]
    block: tuple[int, int, int] | None = None  # Triton: num_warps * 32 threads, whatever the exercise's block
    shared_bytes: int | None = None  # Triton: its dynamic shared memory, from the compiler's metadata
    # Triton's blocked layouts spread a thread's elements over several scalar loads (no vector loads
    # where alignment is unproven): its memory report values each `tl.load` as one access (report.MemoryTrace).
    per_access: bool = False
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
    except Refused as exc:  # its message names the executor already
        return exc.located()
    except PtxError as exc:
        return f"the CPU tier's PTX executor cannot run this kernel: {exc.located()}"
    return PtxKernel(module, kernel, abi, [a.name for a in args])


# What the CPU tier runs a kernel on when the executor refuses its PTX, by language: Triton's interpreter;
# CUDA C++ and CUDA Python nothing (`not_run`, it runs on a GPU worker).
FALLBACK_OF = {"triton": "triton_interpreter"}


def executed_by(ptx: str | None, entry: str, language: str, args: list[ArgSpec]) -> str | None:
    """What the CPU tier's child runs this PTX on, decided again by the engine from the PTX it was sent.

    The child's own word is not asked: on its fallback paths it imports the learner's module. The child
    takes the executor exactly when `prepare` decodes the kernel, so the engine asks `prepare` itself;
    anything it cannot decide (no PTX, no such kernel, PTX over the size the engine reads) is the fallback.
    """
    symbol = kernel_symbol(ptx, entry) if ptx and len(ptx) <= MAX_PTX_CHARS else None
    if symbol is not None and isinstance(prepare(ptx or "", symbol, language, args), PtxKernel):  # type: ignore[arg-type]
        return "ptx_executor"
    return FALLBACK_OF.get(language)


def launch(handle: PtxKernel, values: list[Any], config: LaunchConfig, traced: bool) -> dict[str, Any] | None:
    """Run one launch on the host arrays; the memory report (as JSON data) when `traced`. LearnerError on a fault."""
    params, memory = arguments(handle.kernel, handle.abi, handle.names, values)
    trace = MemoryTrace(per_access=handle.per_access) if traced else None
    executor = Executor(handle.module, handle.kernel, params, memory, trace=trace)
    try:
        block = handle.block or tuple(config.block)
        shared = config.shared_bytes if handle.shared_bytes is None else handle.shared_bytes
        stats = executor.run(Launch(tuple(config.grid), block, shared))  # type: ignore[arg-type]
    except (KernelFault, LimitExceeded) as exc:
        _show(executor)
        diagnostic = Diagnostic(line=exc.line, message=exc.message)
        endless = isinstance(exc, LimitExceeded) and exc.endless
        if endless:  # a GPU would run it until the wall clock: the same verdict, sooner, with a line
            raise LearnerError("timeout", f"time limit exceeded: {exc.located()}", [diagnostic]) from None
        raise LearnerError("runtime_error", exc.located(), [diagnostic]) from None
    except PtxError as exc:
        _show(executor)
        raise LearnerError("not_run", f"the CPU tier's PTX executor cannot run this kernel: {exc.located()}") from None
    _show(executor)
    if trace is None:
        return None
    block_used = list(handle.block or config.block)
    return trace.report(list(config.grid), block_used, stats.threads).model_dump(mode="json")


def _show(executor: Executor) -> None:
    """What the kernel's printf calls printed, on this process's output (the job's output)."""
    text = executor.printed.text()
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
