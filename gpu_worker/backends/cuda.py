"""The `cuda` backend: learners' kernels on a real GPU, inside the sandboxed child.

- CUDA C++ goes through CuPy's `RawModule` (NVRTC, `-lineinfo --std=c++17`;
  CuPy itself adds `-arch=sm_XY` of the device and builds a cubin). CuPy's
  kernel cache is a fresh folder in the job's private /tmp, seeded with the
  harness's own kernels (`gpu_worker.kernel_cache`), so no learner's binary is
  ever loaded for another's job.
  NVRTC's log is turned into diagnostics at lines and columns of the learner's
  own file (the same parser as nvcc's).
- CUDA Python goes through numba-cuda: the learner's module is imported, the
  kernel compiled for the exercise's argument types, launched on device arrays
  that share CuPy's memory.
- Registers, static shared memory, local memory and the thread limit come from
  CuPy's `RawKernel.attributes` or the numba dispatcher, never from text.
- A fault (illegal address, trap, device-side assert) surfaces at the
  synchronisation after the launch and leaves the CUDA context unusable: the
  backend reports `runtime_error` naming the error, and the child ends; the
  next job gets a fresh process and context.
- `time` measures the last launched size with `gpu_worker.timing` under the
  per-GPU lock; `occupancy` asks the driver and the offline calculator.

The child only ever uses CuPy for copies, memsets and the learner's kernel, so
CuPy never compiles kernels of its own in a job (which would cost NVRTC time
with an empty cache).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy

if not hasattr(numpy, "row_stack"):  # numba 0.68 still calls numpy.row_stack, gone in NumPy 2.5
    numpy.row_stack = numpy.vstack  # type: ignore[attr-defined]

from gpu_worker import kernel_cache, timing  # noqa: E402
from gpu_worker.backends import nvcc  # noqa: E402
from gpu_worker.backends.base import Backend, Compiled, LearnerError  # noqa: E402
from gpu_worker.backends.learner_module import import_learner_module  # noqa: E402
from gpu_worker.device_info import Nvml  # noqa: E402
from gpu_worker.diagnostics import from_exception, from_numba_error  # noqa: E402
from gpu_worker.launch import LaunchConfig  # noqa: E402
from gpu_worker.protocol import ArgSpec, CompileInfo, Diagnostic, Language  # noqa: E402

NVRTC_OPTIONS = ("--std=c++17", "-lineinfo")
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
# CUDA errors a learner's kernel can cause, in words (runtime and driver spellings).
FAULTS = {
    "IllegalAddress": "illegal memory access: the kernel read or wrote outside any allocation",
    "ILLEGAL_ADDRESS": "illegal memory access: the kernel read or wrote outside any allocation",
    "InvalidAddressSpace": "invalid address space: a pointer far outside any allocation was dereferenced",
    "INVALID_ADDRESS_SPACE": "invalid address space: a pointer far outside any allocation was dereferenced",
    "MisalignedAddress": "misaligned address: a load or store not aligned to its size",
    "MISALIGNED_ADDRESS": "misaligned address: a load or store not aligned to its size",
    "Assert": "device-side assert triggered",
    "ASSERT": "device-side assert triggered",
    "LaunchFailure": "the kernel trapped (__trap()) or failed: unspecified launch failure",
    "LAUNCH_FAILED": "the kernel trapped (__trap()) or failed: unspecified launch failure",
    "IllegalInstruction": "illegal instruction",
    "ILLEGAL_INSTRUCTION": "illegal instruction",
    "HardwareStackError": "hardware stack error (too deep recursion or a corrupted stack)",
    "HARDWARE_STACK_ERROR": "hardware stack error (too deep recursion or a corrupted stack)",
    "LaunchOutOfResources": "too many resources requested for launch (registers or shared memory per block)",
    "LAUNCH_OUT_OF_RESOURCES": "too many resources requested for launch (registers or shared memory per block)",
    "MemoryAllocation": "out of GPU memory",
    "OUT_OF_MEMORY": "out of GPU memory",
    "InvalidValue": "invalid launch configuration",
    "INVALID_VALUE": "invalid launch configuration",
}
# Errors that leave the context usable; every other fault kills it (the child then ends).
NOT_STICKY = (
    "InvalidValue",
    "INVALID_VALUE",
    "LaunchOutOfResources",
    "LAUNCH_OUT_OF_RESOURCES",
    "MemoryAllocation",
    "OUT_OF_MEMORY",
)
_CUDA_ERROR = re.compile(r"(cudaError(?P<rt>\w+)|CUDA_ERROR_(?P<drv>\w+))")
_PROGRAM_NAME = re.compile(r"(?m)^[^\s()]*?[0-9a-f]{16,}\.cubin\.cu(?=\()")


def device_name() -> str:
    """The device in words, through NVML (no CUDA context is created)."""
    nv = Nvml()
    if nv.ok:
        try:
            name = nv.pynvml.nvmlDeviceGetName(nv.handle)
            name = name.decode() if isinstance(name, bytes) else str(name)
            mig = " (MIG slice)" if nv.mig_mode() else ""
            return f"{name}{mig}"
        except Exception:
            pass
    return "CUDA GPU"


WARM_KERNEL = """
@cuda.jit
def warplab_warm_up(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] = x[i] * 2.0
"""


def warm_numba_compiler() -> int:
    """Compile, load and inspect one small kernel the way a learner's is compiled (a spare does it before its job).

    A process's first Numba compilation also builds Numba's typing and target
    contexts and loads NVVM and the linker; later compilations pay only for
    their own kernel. Nothing is launched: a spare waits beside a job that may be timing.
    Returns the kernel's registers per thread (read from the loaded module).
    """
    from numba import cuda, types
    from numba.core.typing import signature as make_signature

    from gpu_worker.backends.numba_ptx import signature as numba_types

    sig = make_signature(types.void, *numba_types([["float32", 1], ["int32", 0]]))
    namespace: dict[str, Any] = {"cuda": cuda}  # a module of its own, as a learner's kernel is
    exec(compile(WARM_KERNEL, "<warplab-warm-up>", "exec"), namespace)
    kernel = namespace["warplab_warm_up"]
    kernel.compile(sig)
    kernel.inspect_asm(sig.args)
    return int(kernel.get_regs_per_thread(sig))


def fault_message(exc: BaseException) -> tuple[str, str | None]:
    """(words for the learner, the CUDA error's name) for an exception raised at or after a launch."""
    text = str(exc)
    m = _CUDA_ERROR.search(text)
    if m is None:
        return f"{type(exc).__name__}: {text}"[:500], None
    key = m["rt"] or m["drv"]
    words = FAULTS.get(key, text.strip().splitlines()[0][:200])
    return f"{words} ({m.group(0)})", m.group(0)


def nvrtc_diagnostics(log: str, source: str) -> list[Diagnostic]:
    """NVRTC's log as diagnostics in the learner's file (CuPy names the program `<hash>.cubin.cu`)."""
    renamed = _PROGRAM_NAME.sub(nvcc.SOURCE_NAME, log)
    diagnostics = nvcc.parse_diagnostics(renamed, source)
    if not diagnostics:
        first = next((ln for ln in log.splitlines() if ln.strip()), "compilation failed")
        diagnostics = [Diagnostic(message=_PROGRAM_NAME.sub(nvcc.SOURCE_NAME, first)[:500])]
    return diagnostics


@dataclass
class Kernel:
    """A compiled kernel and how to launch it."""

    language: Language
    entry: str
    kernel: Any  # cupy.RawKernel or a numba CUDADispatcher
    roles: list[str]
    signature: Any = None  # numba only
    attributes: dict[str, Any] = field(default_factory=dict)


class CudaBackend(Backend):
    """A real GPU through CuPy (CUDA C++) and numba-cuda (CUDA Python)."""

    name = "cuda"

    def __init__(self) -> None:
        if kernel_cache.CUPY_ENV not in os.environ:  # a spare prepared it before importing CuPy
            kernel_cache.prepare()  # this job's own kernel cache, in its private temp dir
        os.environ.setdefault("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", "0")
        import cupy

        self.cp = cupy
        self.device_id = cupy.cuda.Device().id
        from gpu_worker.device_info import cuda_device_identity

        props, self.uuid, self.nvml = cuda_device_identity(self.device_id)
        self.props = props
        self.arch = f"sm_{props['major']}{props['minor']}"
        self._last: tuple[Kernel, list[Any], LaunchConfig] | None = None
        self.faulted = False
        self.stream: Any = None

    def device(self) -> str:
        name = self.props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    # --- compile ---

    def compile(self, language: Language, source: str, entry: str, args: list[ArgSpec], workdir: Path) -> Compiled:
        roles: list[str] = [str(a.role) for a in args]
        if language == "cuda":
            return self._compile_cuda(source, entry, args, roles)
        return self._compile_numba(source, entry, args, roles, workdir)

    def _compile_cuda(self, source: str, entry: str, args: list[ArgSpec], roles: list[str]) -> Compiled:
        cp = self.cp
        info = CompileInfo(tool=f"NVRTC (CuPy {cp.__version__})", arch=self.arch)
        try:
            module = cp.RawModule(code=source, options=NVRTC_OPTIONS)
            kernel = module.get_function(entry)
        except cp.cuda.compiler.CompileException as exc:
            info.diagnostics = nvrtc_diagnostics(exc.get_message(), source)
            first = next((d for d in info.diagnostics if d.severity == "error"), info.diagnostics[0])
            where = f"line {first.line}: " if first.line else ""
            raise LearnerError("compile_error", where + first.message, info.diagnostics, info) from None
        except cp.cuda.driver.CUDADriverError as exc:
            if "NOT_FOUND" in str(exc):
                raise LearnerError(
                    "rejected", f'no kernel `extern "C" __global__ void {entry}(...)` in your file', compile_info=info
                ) from None
            raise
        attrs = dict(kernel.attributes)
        self._fill(info, attrs)
        info.notes.append("local memory per thread includes any register spills (CUDA reports them together)")
        return Compiled(info=info, handle=Kernel("cuda", entry, kernel, roles, attributes=attrs))

    def _compile_numba(self, source: str, entry: str, args: list[ArgSpec], roles: list[str], workdir: Path) -> Compiled:
        import numba_cuda
        from numba.core.errors import NumbaError

        from gpu_worker.backends.numba_ptx import signature as numba_types
        from gpu_worker.backends.sim import _import_failure

        path = workdir / "submission.py"
        path.write_text(source)
        info = CompileInfo(tool=f"numba-cuda {numba_cuda.__version__} (NVVM)", arch=self.arch)
        try:
            module = import_learner_module(path)
        except BaseException as exc:
            err = _import_failure(exc, path)
            err.compile_info = err.compile_info or CompileInfo(tool=info.tool, diagnostics=err.diagnostics)
            raise err from None
        kernel = getattr(module, entry, None)
        if kernel is None:
            raise LearnerError("rejected", f"your module defines no kernel named {entry!r}")
        py_func = getattr(kernel, "py_func", None)
        if py_func is None or not hasattr(kernel, "compile"):
            raise LearnerError("compile_error", f"{entry!r} is not a kernel: decorate it with @cuda.jit")
        params = list(inspect.signature(py_func).parameters.values())
        if not any(p.kind == p.VAR_POSITIONAL for p in params) and len(params) != len(args):
            line = py_func.__code__.co_firstlineno
            message = f"{entry} takes {len(params)} parameters; this exercise passes {len(args)}: " + ", ".join(
                a.name for a in args
            )
            raise LearnerError("compile_error", f"line {line}: {message}", [Diagnostic(line=line, message=message)])
        from numba.core import types
        from numba.core.typing import signature as make_signature

        arg_types = numba_types([[a.dtype, 0 if a.role == "scalar" else len(a.shape)] for a in args])
        sig = make_signature(types.void, *arg_types)
        try:
            kernel.compile(sig)
        except NumbaError as exc:
            diagnostic = from_numba_error(exc, str(path), source)
            info.diagnostics = [diagnostic]
            where = f"line {diagnostic.line}: " if diagnostic.line else ""
            raise LearnerError("compile_error", where + diagnostic.message, [diagnostic], info) from None
        except Exception as exc:
            diagnostic = from_exception(exc, str(path))
            info.diagnostics = [diagnostic]
            raise LearnerError("compile_error", diagnostic.message, [diagnostic], info) from None
        attrs = {
            "num_regs": kernel.get_regs_per_thread(sig),
            "shared_size_bytes": kernel.get_shared_mem_per_block(sig),
            "local_size_bytes": kernel.get_local_mem_per_thread(sig),
            "max_threads_per_block": kernel.get_max_threads_per_block(sig),
            "const_size_bytes": kernel.get_const_mem_size(sig),
        }
        self._fill(info, attrs)
        with contextlib.suppress(Exception):  # the PTX is a courtesy; its absence is not the learner's fault
            info.ptx_excerpt = _excerpt(kernel.inspect_asm(sig.args), entry)
        return Compiled(info=info, handle=Kernel("numba", entry, kernel, roles, sig, attrs))

    @staticmethod
    def _fill(info: CompileInfo, attrs: dict[str, Any]) -> None:
        info.registers = attrs.get("num_regs")
        info.shared_bytes = attrs.get("shared_size_bytes")
        info.local_bytes = attrs.get("local_size_bytes")
        info.max_threads_per_block = attrs.get("max_threads_per_block")
        info.constant_bytes = attrs.get("const_size_bytes")

    # --- launch ---

    def _device_args(self, handle: Kernel, args: list[Any]) -> list[Any]:
        cp = self.cp
        out = []
        for value in args:
            if isinstance(value, numpy.ndarray):
                dev = cp.asarray(value)  # a host-to-device copy: the poisoned outputs travel too
                if handle.language == "numba":
                    from numba import cuda

                    dev = (dev, cuda.as_cuda_array(dev, sync=False))
                out.append(dev)
            else:
                out.append(value)
        return out

    def _launcher(self, handle: Kernel, dev_args: list[Any], config: LaunchConfig) -> timing.Launch:
        grid, block, shared = config.grid, config.block, config.shared_bytes
        if handle.language == "cuda":
            kernel = handle.kernel
            if shared > DEFAULT_DYNAMIC_SHARED_LIMIT:
                kernel.max_dynamic_shared_size_bytes = shared
            raw_args = tuple(a for a in dev_args)

            def launch_cuda(stream: Any) -> None:
                kernel(grid, block, raw_args, stream=stream, shared_mem=shared)

            return launch_cuda
        from numba import cuda

        numba_args = [a[1] if isinstance(a, tuple) else a for a in dev_args]
        streams: dict[int, Any] = {}
        dispatcher = handle.kernel

        def launch_numba(stream: Any) -> None:
            ns = streams.get(stream.ptr)
            if ns is None:
                ns = streams[stream.ptr] = cuda.external_stream(stream.ptr)
            dispatcher[grid, block, ns, shared](*numba_args)

        return launch_numba

    def _fault(self, exc: BaseException) -> LearnerError:
        words, name = fault_message(exc)
        self.faulted = name is not None and not any(k in name for k in NOT_STICKY)
        return LearnerError("runtime_error", f"the kernel failed on the GPU: {words}")

    def launch(self, handle: Any, args: list[Any], config: LaunchConfig) -> None:
        cp = self.cp
        try:
            if self.stream is None:
                self.stream = cp.cuda.Stream(non_blocking=True)
            with self.stream:  # uploads, the launch and downloads in one stream's order
                dev_args = self._device_args(handle, args)
                launch = self._launcher(handle, dev_args, config)
                launch(self.stream)
                cp.cuda.runtime.deviceSynchronize()
            for host, dev, role in zip(args, dev_args, handle.roles, strict=True):
                if role == "out":
                    arr = dev[0] if isinstance(dev, tuple) else dev
                    host[...] = cp.asnumpy(arr)
        except LearnerError:
            raise
        except Exception as exc:
            raise self._fault(exc) from None
        self._last = (handle, dev_args, config)

    # --- time and occupancy (the child calls these after `launch`) ---

    def time(self, config: timing.TimingConfig | None = None) -> dict[str, Any]:
        """Time the last launched size (its arrays stay on the device) under the per-GPU lock."""
        from gpu_worker.gpu_lock import timing_lock

        if self._last is None:
            raise RuntimeError("time() before launch()")
        handle, dev_args, launch_config = self._last
        launch = self._launcher(handle, dev_args, launch_config)
        try:
            with timing_lock(self.uuid) as waited:
                result = timing.measure(launch, nvml=self.nvml, config=config)
        except Exception as exc:
            words, name = fault_message(exc)
            if name is None:
                raise
            raise self._fault(exc) from None
        summary = timing.brief(result)
        summary["lock_wait_seconds"] = round(waited, 4)
        summary["device_before"] = result["device_before"]
        summary["device_after"] = result["device_after"]
        summary["method"] = "CUDA events, L2 flushed before each sample; hot = CUDA-graph replay / K"
        return summary

    def occupancy(self, handle: Any, config: LaunchConfig) -> dict[str, Any]:
        """Active blocks per SM for this launch: the driver's answer beside the offline calculator's."""
        threads, dyn = config.threads_per_block, config.shared_bytes
        if handle.language == "cuda":
            kernel = handle.kernel
            if dyn > DEFAULT_DYNAMIC_SHARED_LIMIT:
                kernel.max_dynamic_shared_size_bytes = dyn
            attrs = dict(kernel.attributes)
            driver = self.cp.cuda.driver
            driver_blocks = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, dyn)
        else:
            from numba import cuda

            attrs = dict(handle.attributes)
            cufunc = handle.kernel.overloads[handle.signature.args]._codelibrary.get_cufunc()
            driver_blocks = cuda.current_context().get_active_blocks_per_multiprocessor(cufunc, threads, dyn)
        out: dict[str, Any] = {"driver_blocks_per_sm": int(driver_blocks), "threads_per_block": threads}
        max_warps = self.props["maxThreadsPerMultiProcessor"] // 32
        out["driver_occupancy"] = int(driver_blocks) * -(-threads // 32) / max_warps
        try:
            from gpu_worker.occupancy import occupancy_from_kernel_attrs

            offline = occupancy_from_kernel_attrs(self.arch, config.block, attrs, dyn)
            out["offline"] = offline.model_dump()
            out["agree"] = offline.active_blocks_per_sm == int(driver_blocks)
        except Exception as exc:  # the calculator is optional here; say why it is missing
            out["offline_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return out

    def listing(self, handle: Kernel, source: str, workdir: Path) -> dict[str, Any]:
        """PTX and SASS with source lines, compiled again for reading once the job is measured."""
        from gpu_worker.backends.listing import listing

        if handle.language == "cuda":
            return listing("cuda", source, handle.entry, self.arch, workdir, options=NVRTC_OPTIONS)
        py_func = handle.kernel.py_func
        return listing("numba", source, handle.entry, self.arch, workdir, py_func=py_func, signature=handle.signature)

    def close(self) -> None:
        if self.faulted:
            return  # the context is dead; freeing would only raise the same error again
        with contextlib.suppress(Exception):
            self.cp.get_default_memory_pool().free_all_blocks()


def _excerpt(ptx: str, entry: str, max_lines: int = 60) -> str:
    from gpu_worker.backends import ptxas

    names = [n for n in ptxas.entries(ptx) if entry in n]
    return ptxas.excerpt(ptx, names[0] if names else entry, max_lines)


BACKEND = CudaBackend
