"""The `sim` backend (the CPU tier): CUDA C++ and CUDA Python run as PTX on the executor of `gpu_worker.ptx`.

CUDA C++ is compiled to PTX by nvcc, CUDA Python by Numba's real compiler (`numba_ptx`), each in its
own process, and that PTX, not the learner's source, is run by the executor through `ptx_sim`: the
outputs, the memory report and any fault on a line come from it. A kernel using an instruction the
executor does not run is `not_run`, in either language, with the instruction and line named: it runs on
a GPU worker. (Numba's CUDA simulator was the CUDA Python fallback until every lab's sample ran on the
executor; the module is imported here, under the simulator, only to word a compile failure as the import
would, and for the sandbox's own tests.)

Triton kernels are compiled by the real Triton compiler for sm_90 (`triton_ptx`) and their PTX runs on
the executor too (`triton_sim`), one block of num_warps * 32 threads per program; Triton's interpreter
(TRITON_INTERPRET=1) is their fallback. Nothing on this backend is timed.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_worker.backends import SIM_DEVICE, compile_server, nvcc, ptx_sim, ptxas, sass
from gpu_worker.backends.base import Backend, Compiled, LearnerError
from gpu_worker.backends.import_errors import import_failure, located
from gpu_worker.backends.learner_module import UNCHECKED_ENV, import_learner_module
from gpu_worker.exercise.launch import LaunchConfig
from gpu_worker.protocol import ArgSpec, CompileInfo, Diagnostic, Language

NOT_RUN = "CUDA C++ is compiled and analysed on the simulator backend, not run; it runs on a GPU worker"
THREAD_STACK_BYTES = 512 * 1024  # the threads this child starts (the listing, Triton's interpreter) stay small
ANALYSIS_SECONDS = 120.0


class SimBackend(Backend):
    """The CPU tier: PTX on the executor; Triton's interpreter as Triton's labelled fallback."""

    name = "sim"

    def __init__(self) -> None:
        threading.stack_size(THREAD_STACK_BYTES)
        self._traced = False
        self._memory_report: dict[str, Any] | None = None

    def device(self) -> str:
        return SIM_DEVICE

    def compile(
        self,
        language: Language,
        source: str,
        entry: str,
        args: list[ArgSpec],
        workdir: Path,
        options: dict[str, Any] | None = None,
    ) -> Compiled:
        if language == "cuda":
            return on_executor(compile_cuda(source, entry, args, workdir), entry, args)
        if language == "triton":
            from gpu_worker.backends import triton_sim

            return triton_sim.compile_triton(source, entry, args, workdir, options or {})
        return self._compile_numba(source, entry, args, workdir)

    def _compile_numba(self, source: str, entry: str, args: list[ArgSpec], workdir: Path) -> Compiled:
        """Numba's real compiler (its own process) makes the PTX; the executor runs it, never the module here.

        Only when the compile fails (to word the learner's error as the import would) is the module imported
        in this process; PTX the executor cannot run is `not_run`, the instruction and line named.
        """
        path = workdir / "submission.py"
        path.write_text(source)
        analysis = compile_server.take()  # the real compiler, in its own process
        analysis.compile(path, entry, args, (9, 0), listing=False)  # the SASS comes after the compile report
        try:
            if os.environ.get(UNCHECKED_ENV) == "1":
                # only the sandbox's own tests (module rules off): their hostile module level must meet the
                # walls in this process, the one that talks to the engine, as it did before the executor
                self._import_kernel(path, entry, args)
            found = analysis.result(timeout=ANALYSIS_SECONDS)
            if not found.get("ok"):
                self._import_kernel(path, entry, args)  # the import's own words for a missing or misshapen kernel
        except LearnerError as exc:
            if exc.verdict == "compile_error" and exc.compile_info is None:
                exc.compile_info = CompileInfo(tool="python (numba-cuda simulator)", diagnostics=exc.diagnostics)
            raise
        finally:
            analysis.stop()
        info = compiled_or_refused(found)
        info.max_threads_per_block = 1024
        cubin = workdir / "numba-kernel.cubin"  # written by the compile process's ptxas
        listing = deferred_listing(cubin, info.entry_symbol, source, entry)
        symbol = str(found.get("symbol") or info.entry_symbol or entry)
        prepared = ptx_sim.prepare(str(found["ptx"]), symbol, "numba", args)
        if isinstance(prepared, ptx_sim.PtxKernel):
            info.notes.append(f"run on the CPU: {ptx_sim.DEVICE}")
            return Compiled(info=info, handle=prepared, listing=listing, ptx=str(found["ptx"]))
        reason = f"{prepared}; it runs on a GPU worker"
        return Compiled(info=info, handle=None, not_run_reason=reason, listing=listing, ptx=str(found["ptx"]))

    def _import_kernel(self, path: Path, entry: str, args: list[ArgSpec]) -> Any:
        try:
            module = import_learner_module(path)
        except BaseException as exc:
            raise import_failure(exc, path) from None
        kernel = getattr(module, entry, None)
        if kernel is None:
            raise LearnerError("rejected", f"your module defines no kernel named {entry!r}")
        py_func = getattr(kernel, "py_func", None)
        if py_func is None or not hasattr(kernel, "__getitem__"):
            raise LearnerError("compile_error", f"{entry!r} is not a kernel: decorate it with @cuda.jit")
        try:
            parameters = list(inspect.signature(py_func).parameters.values())
        except (TypeError, ValueError):
            return kernel
        if not any(p.kind == p.VAR_POSITIONAL for p in parameters) and len(parameters) != len(args):
            wanted = ", ".join(a.name for a in args)
            line = py_func.__code__.co_firstlineno
            message = f"{entry} takes {len(parameters)} parameters; this exercise passes {len(args)}: ({wanted})"
            raise LearnerError("compile_error", f"line {line}: {message}", [Diagnostic(line=line, message=message)])
        return kernel

    def launch(self, handle: Any, args: list[Any], config: LaunchConfig, check: Any = None) -> None:
        if isinstance(handle, ptx_sim.PtxKernel):
            traced = self._memory_report is None and not self._traced
            self._traced = True
            found = ptx_sim.launch(handle, args, config, traced)
            if found is not None:
                self._memory_report = found
            return None
        from gpu_worker.backends import triton_sim  # the only other kernel here: Triton's interpreted fallback

        path = getattr(sys.modules.get("submission"), "__file__", "")
        return triton_sim.launch(handle, args, config, path)

    def close(self) -> None:
        compile_server.discard_spare()  # a spare's compiler that a CUDA C++ job never needed

    def take_memory_report(self) -> dict[str, Any] | None:
        """The traced launch's memory analysis, once."""
        report, self._memory_report = self._memory_report, None
        return report


def compiled_or_refused(found: dict[str, Any]) -> CompileInfo:
    """The compile process's report when it compiled the kernel; else the error that stops the job.

    The simulator runs a kernel's body as plain Python, so it may run only what Numba's real compiler
    typed in nopython mode: with no PTX there is no run, ever. A failure that is the learner's (or that
    could be: the compiler ending without an answer) is their compile error; a compiler that cannot run
    on this worker at all (`unavailable`: numba-cuda missing, or the compile process itself failing) is
    ours, an infrastructure error, and the job is not run either.
    """
    if found.get("ok"):
        return CompileInfo.model_validate(found["info"])
    error = compile_server.learner_error(found, "numba-cuda (NVVM)", "sm_90")
    if error is not None:
        raise error
    raise RuntimeError(f"the Numba compiler could not run on this worker: {found.get('message', '')}"[:1000])


def _parameter_count(ptx: str, entry: str) -> int | None:
    match = re.search(rf"\.entry\s+{re.escape(entry)}\s*\((?P<params>[^)]*)\)", ptx)
    return None if match is None else len(re.findall(r"\.param\b", match["params"]))


def compile_cuda(source: str, entry: str, args: list[ArgSpec], workdir: Path) -> Compiled:
    """nvcc to PTX, the entry checked, ptxas for the numbers; shared by the GPU backend."""
    try:
        ptx, diagnostics = nvcc.compile_ptx(source, workdir)
    except FileNotFoundError as exc:
        raise RuntimeError(str(exc)) from None
    tool = f"nvcc {nvcc.version()} + ptxas"
    info = CompileInfo(tool=tool, arch="sm_90", diagnostics=diagnostics)
    if ptx is None:
        first = next((d for d in diagnostics if d.severity == "error"), diagnostics[0])
        raise LearnerError("compile_error", located(first), diagnostics, info)
    kernels = ptxas.entries(ptx)
    if entry not in kernels:
        mangled = [k for k in kernels if entry in k]
        hint = f' (found {mangled[0]}: declare it extern "C")' if mangled else ""
        raise LearnerError(
            "rejected", f'no kernel `extern "C" __global__ void {entry}(...)` in your file{hint}', compile_info=info
        )
    count = _parameter_count(ptx, entry)
    if count is not None and count != len(args):
        wanted = ", ".join(f"{a.name}" for a in args)
        raise LearnerError(
            "compile_error",
            f"{entry} takes {count} parameters; this exercise passes {len(args)}: ({wanted})",
            compile_info=info,
        )
    info.ptx_excerpt = ptxas.excerpt(ptx, entry)
    ptx_path = workdir / "submission.ptx"
    listing: Callable[[], dict[str, Any]] | None = None
    try:
        stats, _ = ptxas.assemble(ptx_path)
    except (OSError, RuntimeError) as exc:
        info.notes.append(f"registers and spills unknown: {exc}"[:500])
    else:
        if entry in stats:
            stats[entry].fill(info)
        listing = deferred_listing(ptx_path.with_suffix(".cubin"), entry, source)
    info.max_threads_per_block = 1024
    return Compiled(info=info, handle=None, not_run_reason=NOT_RUN, listing=listing, ptx=ptx)


def on_executor(compiled: Compiled, entry: str, args: list[ArgSpec]) -> Compiled:
    """The compiled CUDA C++ kernel made runnable on the CPU tier's PTX executor, or not run with the reason."""
    prepared = ptx_sim.prepare(compiled.ptx or "", entry, "cuda", args)
    if isinstance(prepared, str):
        compiled.not_run_reason = f"{prepared}; it runs on a GPU worker"
        return compiled
    compiled.handle, compiled.not_run_reason = prepared, ""
    compiled.info.notes.append(f"run on the CPU: {ptx_sim.DEVICE}")
    return compiled


def deferred_listing(
    cubin: Path, symbol: str | None, source: str, name: str | None = None
) -> Callable[[], dict[str, Any]] | None:
    """nvdisasm started now on the cubin; the returned call reads its annotated SASS (the `listing` message).

    The compile report goes out without the SASS, which costs more than the compile (`sass.Disassembly`).
    """
    if not symbol or not cubin.is_file():
        return None
    started = sass.Disassembly(cubin)

    def listing() -> dict[str, Any]:
        text, missing = started.excerpt(symbol, source, name)
        return {"sass_excerpt": text, "notes": [missing] if missing else []}

    return listing


BACKEND = SimBackend
