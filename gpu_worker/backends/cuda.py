"""The `cuda` backend: learners' kernels on a real GPU, inside the sandboxed child.

- CUDA C++ goes through CuPy's `RawModule` (NVRTC, `-lineinfo --std=c++17`;
  CuPy itself adds `-arch=sm_XY` of the device and builds a cubin). CuPy's
  kernel cache is a fresh folder in the job's private /tmp, seeded with the
  harness's own kernels (`gpu_worker.measurement.kernel_cache`), so no learner's binary is
  ever loaded for another's job.
  NVRTC's log is turned into diagnostics at lines and columns of the learner's
  own file (the same parser as nvcc's).
- CUDA Python goes through numba-cuda in the learner's compile process
  (`compile_server`, `numba_ptx`): only there is the learner's module imported
  and compiled for the exercise's argument types. This process, which makes
  the inputs, launches, times and fingerprints, loads the PTX it hands back
  with CuPy and launches it through Numba's kernel ABI (`numba_abi`): it never
  imports learner code, so nothing the learner wrote can patch its clock.
- Triton goes the same way (`triton_ptx` in the compile process, `triton_abi`
  here): this process loads the cubin Triton made, checks its parameters against
  the exercise's, and launches one block of `num_warps` * 32 threads per program
  with the kernel's dynamic shared memory.
- Registers, static shared memory, local memory and the thread limit come from
  CuPy's `RawKernel.attributes` of the loaded binary, never from the compiler's text.
- A fault (illegal address, trap, device-side assert) surfaces at the
  synchronisation after the launch and leaves the CUDA context unusable: the
  backend reports `runtime_error` naming the error, and the child ends; the
  next job gets a fresh process and context.
- `time` measures the last launched size with `gpu_worker.measurement.timing` under the
  per-GPU lock; `occupancy` asks the driver and the offline calculator.

The child only ever uses CuPy for copies, memsets and the learner's kernel, so
CuPy never compiles kernels of its own in a job (which would cost NVRTC time
with an empty cache).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy

if not hasattr(numpy, "row_stack"):  # numba 0.68 still calls numpy.row_stack, gone in NumPy 2.5
    numpy.row_stack = numpy.vstack  # type: ignore[attr-defined]

from gpu_worker.backends import device_check, nvcc  # noqa: E402
from gpu_worker.backends.base import Backend, Compiled, LearnerError  # noqa: E402
from gpu_worker.backends.device_check import CheckSpec  # noqa: E402
from gpu_worker.exercise.launch import LaunchConfig  # noqa: E402
from gpu_worker.measurement import kernel_cache, stats, timing  # noqa: E402
from gpu_worker.measurement.device_info import DeviceState, Nvml  # noqa: E402
from gpu_worker.protocol import ArgSpec, CheckInfo, CompileInfo, Diagnostic, Language  # noqa: E402

NVRTC_OPTIONS = ("--std=c++17", "-lineinfo")
COMPILE_SECONDS = 60.0
TAMPERED = (
    "the kernel wrote outside its outputs: the expected value of {0!r}, computed before it ran, changed "
    "while it ran"
)  # the learner's Numba compile, inside the job's own wall-clock limit
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
CACHED_NOTE = "compiled before from this same source, toolchain and GPU: loaded from the worker's compile cache"
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
    attributes: dict[str, Any] = field(default_factory=dict)
    args: list[ArgSpec] = field(default_factory=list)  # numba and triton: for their parameters (numba_abi, triton_abi)
    abi: Any = None  # triton only: a triton_abi.KernelAbi (block, dynamic shared memory, scratch pointers)

    def shared_bytes(self, config: LaunchConfig) -> int:
        """Dynamic shared memory per block: the launch's, or what Triton's compiled kernel needs."""
        return int(self.abi.shared) if self.abi is not None else config.shared_bytes

    def block(self, config: LaunchConfig) -> tuple[int, ...]:
        return (int(self.abi.threads),) if self.abi is not None else config.block


@dataclass
class TimedSets:
    """What a size's timing launches: the checked launch (kernel, device arguments, configuration), and where the
    job has timed inputs, their sets on the device, expected outputs and the guard that alternates them."""

    launched: tuple[Kernel, list[Any], LaunchConfig]
    stream: Any = None  # the timed launches' own stream, made here: not a driver call inside the exclusive hold
    check: CheckSpec | None = None
    sets: list[list[Any]] = field(default_factory=list)
    expectations: list[Any] = field(default_factory=list)
    guard: Any = None  # a launch_guard.LaunchGuard, with `sets`
    graph: Any = None  # the hot number's graph (`timing.ready_graph`), made under the shared kind of the lock


@dataclass
class TimedLaunches:
    """A size's timed launches, done (`CudaBackend.time_launches`): what `finish_timing` reads back and judges."""

    prepared: TimedSets | None
    stream: Any  # the cupy stream they ran in: the guard's read-back follows them there
    record: dict[str, Any]  # `timing.launches`' record


class CudaBackend(Backend):
    """A real GPU through CuPy (CUDA C++) and numba-cuda (CUDA Python)."""

    name = "cuda"

    def __init__(self) -> None:
        if kernel_cache.CUPY_ENV not in os.environ:  # a spare prepared it before importing CuPy
            kernel_cache.prepare()  # this job's own kernel cache, in its private temp dir
        import cupy

        self.cp = cupy
        self.device_id = cupy.cuda.Device().id
        from gpu_worker.measurement.device_info import cuda_device_identity

        props, self.uuid, self.nvml = cuda_device_identity(self.device_id)
        self.props = props
        self.arch = f"sm_{props['major']}{props['minor']}"
        self._last: tuple[Kernel, list[Any], LaunchConfig] | None = None
        self.faulted = False
        self.stream: Any = None
        self.sharing_wait_s = 0.0  # time this job's correctness work waited for other jobs' timings

    def device(self) -> str:
        name = self.props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    # --- compile ---

    def compile(
        self,
        language: Language,
        source: str,
        entry: str,
        args: list[ArgSpec],
        workdir: Path,
        options: dict[str, Any] | None = None,
        cached: dict[str, Any] | None = None,
    ) -> Compiled:
        """Compile the learner's kernel; `cached`, the engine's kept answer for this very source, toolchain and
        GPU (`compile_cache`), stands in for a Numba or Triton compile process's."""
        roles: list[str] = [str(a.role) for a in args]
        if language == "cuda":
            return self._compile_cuda(source, entry, args, roles)
        if language == "triton":
            return self._compile_triton(source, entry, args, roles, workdir, options or {}, cached)
        return self._compile_numba(source, entry, args, roles, workdir, cached)

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

    def _compile_numba(
        self,
        source: str,
        entry: str,
        args: list[ArgSpec],
        roles: list[str],
        workdir: Path,
        cached: dict[str, Any] | None = None,
    ) -> Compiled:
        """The learner's module is imported and compiled in its own process; this one loads only its PTX."""
        from gpu_worker.backends import compile_server, numba_abi

        path = workdir / "submission.py"
        path.write_text(source)
        cc = (int(self.props["major"]), int(self.props["minor"]))
        found = cached or compile_server.compile_answer(
            "numba_ptx", path, entry, args, cc, timeout=COMPILE_SECONDS, tool="numba-cuda (NVVM)", arch=self.arch
        )
        info = CompileInfo.model_validate(found["info"])
        ptx, symbol = str(found["ptx"]), str(found["symbol"])
        numba_abi.check_parameters(ptx, symbol, args)
        ptx_path = workdir / "kernel.ptx"
        ptx_path.write_text(ptx)
        try:
            kernel = self.cp.RawModule(path=str(ptx_path)).get_function(symbol)
            attrs = dict(kernel.attributes)
        except self.cp.cuda.driver.CUDADriverError as exc:
            words = f"the GPU refused the compiled kernel: {exc}"[:500]
            raise LearnerError("compile_error", words, compile_info=info) from None
        info.arch = self.arch
        self._fill(info, attrs)  # the driver's numbers for the loaded binary, not the compile process's
        info.notes.append("compiled in a process of its own; this one loaded its PTX and never ran your module")
        if cached:
            info.notes.append(CACHED_NOTE)
        handle = Kernel("numba", entry, kernel, roles, attributes=attrs, args=args)
        return Compiled(info=info, handle=handle, answer=None if cached else found)

    def _compile_triton(
        self,
        source: str,
        entry: str,
        args: list[ArgSpec],
        roles: list[str],
        workdir: Path,
        options: dict[str, Any],
        cached: dict[str, Any] | None = None,
    ) -> Compiled:
        """Triton compiles the learner's kernel in its own process; this one loads the cubin it made."""
        import base64

        from gpu_worker.backends import compile_server, triton_abi

        path = workdir / "submission.py"
        path.write_text(source)
        cc = (int(self.props["major"]), int(self.props["minor"]))
        found = cached or compile_server.compile_answer(
            "triton_ptx", path, entry, args, cc, timeout=COMPILE_SECONDS, tool="Triton", arch=self.arch, triton=options
        )
        info = CompileInfo.model_validate(found["info"])
        ptx = str(found.get("ptx") or "")
        try:
            abi = triton_abi.read(dict(found.get("kernel") or {}), ptx, args)
        except triton_abi.Unsupported as exc:
            raise LearnerError("rejected", str(exc), compile_info=info) from None
        binary = workdir / "kernel.cubin"
        cubin = found.get("cubin")
        if isinstance(cubin, str) and cubin:
            binary.write_bytes(base64.b64decode(cubin, validate=True))
        else:
            binary = workdir / "kernel.ptx"
            binary.write_text(ptx)
        try:
            kernel = self.cp.RawModule(path=str(binary)).get_function(abi.name)
            attrs = dict(kernel.attributes)
        except self.cp.cuda.driver.CUDADriverError as exc:
            words = f"the GPU refused the compiled kernel: {exc}"[:500]
            raise LearnerError("compile_error", words, compile_info=info) from None
        info.arch = self.arch
        self._fill(info, attrs)
        info.shared_bytes = int(attrs.get("shared_size_bytes") or 0) + abi.shared
        info.max_threads_per_block = min(int(attrs.get("max_threads_per_block") or abi.threads), abi.threads)
        info.notes.append(
            f"compiled by Triton {abi.triton_version} in a process of its own; this one loaded its cubin and never "
            f"ran your module; shared memory includes {abi.shared} bytes of dynamic shared memory"
        )
        if cached:
            info.notes.append(CACHED_NOTE)
        handle = Kernel("triton", entry, kernel, roles, attributes=attrs, args=args, abi=abi)
        return Compiled(info=info, handle=handle, answer=None if cached else found)

    @staticmethod
    def _fill(info: CompileInfo, attrs: dict[str, Any]) -> None:
        info.registers = attrs.get("num_regs")
        info.shared_bytes = attrs.get("shared_size_bytes")
        info.local_bytes = attrs.get("local_size_bytes")
        info.max_threads_per_block = attrs.get("max_threads_per_block")
        info.constant_bytes = attrs.get("const_size_bytes")

    # --- inputs ---

    def make_arguments(self, args: list[ArgSpec], sizes: dict[str, int], seed: int) -> dict[str, Any]:
        """The job's arguments for one input set, born on this GPU in the launches' stream (`device_inputs`)."""
        from gpu_worker.exercise.device_inputs import make_device_arguments

        with self.correctness(), self._stream():
            return make_device_arguments(self.cp, args, sizes, seed)

    @contextlib.contextmanager
    def correctness(self) -> Iterator[None]:
        """A block of correctness work on the GPU (draws, the check launch, expected outputs, comparisons) under
        the shared kind of the per-GPU lock: beside other jobs' such work, never inside a timed run (`gpu_lock`).
        Under a class's load, checks running into a timing took its samples from 20 to 120 a size (run 22).

        The child holds one block around a size's correctness work, so it passes the lock's writer-first gate
        once instead of once a step. Blocks nest (the lock is re-entrant
        per thread). Under 8 learners one block a size instead of six changed the job's total wait for the lock
        by nothing measurable (run 24): the checks waited less and the timings, behind longer blocks, more.
        The stream is drained before the lock goes, or its queued kernels would run on into someone's timing;
        a faulted context cannot drain, and the fault is the news."""
        from gpu_worker.measurement.gpu_lock import sharing_lock

        with sharing_lock(self.uuid) if self.uuid else contextlib.nullcontext(0.0) as waited:
            self.sharing_wait_s += waited
            try:
                yield
            except BaseException:
                with contextlib.suppress(Exception):
                    self._stream().synchronize()
                raise
            # a fault caught inside the block (the child reports it and leaves) left nothing that can drain
            with contextlib.suppress(Exception) if self.faulted else contextlib.nullcontext():
                self._stream().synchronize()

    def _stream(self) -> Any:
        """The stream every step of a job runs in (made on first use): uploads, draws, launches, checks."""
        if self.stream is None:
            self.stream = self.cp.cuda.Stream(non_blocking=True)
        return self.stream

    # --- launch ---

    def _device_args(self, handle: Kernel, args: list[Any]) -> list[Any]:
        cp = self.cp
        out = []
        for value in args:
            if isinstance(value, numpy.ndarray):
                out.append(cp.asarray(value))  # a host-to-device copy: the poisoned outputs travel too
            else:
                out.append(value)
        return out

    def _launcher(self, handle: Kernel, dev_args: list[Any], config: LaunchConfig) -> timing.Launch:
        grid, block, shared = config.grid, handle.block(config), handle.shared_bytes(config)
        kernel = handle.kernel
        if shared > DEFAULT_DYNAMIC_SHARED_LIMIT:
            kernel.max_dynamic_shared_size_bytes = shared
        if handle.language == "numba":
            from gpu_worker.backends.numba_abi import kernel_arguments

            raw_args = kernel_arguments(handle.args, dev_args)
        elif handle.language == "triton":
            from gpu_worker.backends import triton_abi

            raw_args = triton_abi.kernel_arguments(handle.args, dev_args, handle.abi)
        else:
            raw_args = tuple(dev_args)

        def launch(stream: Any) -> None:
            kernel(grid, block, raw_args, stream=stream, shared_mem=shared)

        return launch

    def _fault(self, exc: BaseException) -> LearnerError:
        words, name = fault_message(exc)
        self.faulted = name is not None and not any(k in name for k in NOT_STICKY)
        return LearnerError("runtime_error", f"the kernel failed on the GPU: {words}")

    def launch(self, handle: Any, args: list[Any], config: LaunchConfig, check: Any = None) -> list[CheckInfo] | None:
        """Run the kernel once. With `check`, judge its outputs on the device and return the checks;
        without, copy the outputs back into the host arrays."""
        cp = self.cp
        try:
            with self.correctness(), self._stream():  # uploads, the launch and downloads in one stream's order
                dev_args = self._device_args(handle, args)
                expectation = device_check.expect(cp, check, dev_args) if check is not None else None
                launch = self._launcher(handle, dev_args, config)
                launch(self.stream)
                if check is None:  # judged on the device, the comparison's read-back is the wait (and any fault's news)
                    cp.cuda.runtime.deviceSynchronize()
                checks = None
                if check is not None and expectation is not None:
                    checks = device_check.compare(cp, check, expectation, dev_args)
                if checks is None:
                    for host, dev, role in zip(args, dev_args, handle.roles, strict=True):
                        if role == "out" and isinstance(host, numpy.ndarray):  # device-born outputs stay there
                            host[...] = cp.asnumpy(dev)
        except device_check.Tampered as exc:
            raise LearnerError("runtime_error", TAMPERED.format(exc)) from None
        except LearnerError:
            raise
        except Exception as exc:
            raise self._fault(exc) from None
        self._last = (handle, dev_args, config)
        return checks

    # --- time and occupancy (the child calls these after `launch`) ---

    def prepare_timed(self, timed: list[list[Any]] | None, check: CheckSpec | None) -> TimedSets:
        """What the last launched size's timing will launch: that launch, and with `timed` (argument lists from
        fresh seeds) and `check`, the timed launches' own input sets on the device, their expected outputs and the
        `LaunchGuard` that alternates them. Correctness work, so the child does it in the size's `correctness`
        block, before `time` takes the GPU alone; a job's sizes are all checked before the first is timed, so each
        size's timing keeps what its own launch left (`time` would otherwise take the last size's)."""
        from gpu_worker.measurement.launch_guard import LaunchGuard

        if self._last is None:
            raise RuntimeError("prepare_timed() before launch()")
        handle, dev_args, launch_config = self._last
        cp, stream = self.cp, self.cp.cuda.Stream(non_blocking=True)
        if not timed or check is None:
            launch = self._launcher(handle, dev_args, launch_config)
            return TimedSets(self._last, stream, graph=self._ready_graph(launch, stream))
        with self._faults(), self.correctness(), self._stream():
            sets = [self._device_args(handle, values) for values in timed]
            expectations = [device_check.expect(cp, check, s) for s in sets]
            outs = [[d for d, r in zip(s, handle.roles, strict=True) if r == "out"] for s in sets]
            guard = LaunchGuard(cp, [self._launcher(handle, s, launch_config) for s in sets], outs)
        graph = self._ready_graph(guard.launch, stream)  # the sets drawn above are on the device: the block drained
        return TimedSets(self._last, stream, check, sets, expectations, guard, graph)

    def _ready_graph(self, launch: timing.Launch, stream: Any) -> timing.ReadyGraph | None:
        """The hot number's graph for `launch` on `stream`, made now as correctness work (`timing.ready_graph`):
        its capture and sizing are host work the exclusive hold no longer waits for."""
        with self._faults(), self.correctness():
            return timing.ready_graph(launch, stream)

    @contextlib.contextmanager
    def alone(self) -> Iterator[float]:
        """The GPU alone (the per-GPU lock's exclusive kind) for a block of timed launches; yields the wait.

        The child times all of a job's sizes' launches in one such block (`time_launches` finds the lock held)
        and reads their guards and timed outputs after it (`finish_timing`): under 8 learners each size's
        timing, and its timed outputs' comparison after it, took the lock apart (nine holds a job, three of them
        exclusive), and each hold queued behind the other jobs' (run 29: 0.56 s a job waiting for the timing
        lock, 0.67 s for the shared kind, of a 2.4 s job)."""
        from gpu_worker.measurement.gpu_lock import timing_lock

        with timing_lock(self.uuid) if self.uuid else contextlib.nullcontext(0.0) as waited:
            yield waited

    def time(
        self,
        prepared: TimedSets | None = None,
        config: timing.TimingConfig | None = None,
        budget_s: float | None = None,
    ) -> dict[str, Any]:
        """Time a checked size on its own: its launches alone on the GPU (`time_launches`), then what they left
        judged (`finish_timing`), the device's state read before and after."""
        before = self.device_state()
        launched = self.time_launches(prepared, config, budget_s)
        return self.finish_timing(launched, [before, self.device_state()])

    def device_state(self) -> DeviceState | None:
        """The GPU's state now (clocks' event reasons, power, other compute processes), or None without NVML."""
        return self.nvml.state() if self.nvml is not None else None

    def time_launches(
        self,
        prepared: TimedSets | None = None,
        config: timing.TimingConfig | None = None,
        budget_s: float | None = None,
    ) -> TimedLaunches:
        """A checked size's timed launches, alone on the GPU (the per-GPU lock's exclusive kind, held around the
        launches only, or the caller's `alone` block): `prepared`'s launch (`prepare_timed`), else the last
        launched size's; on `prepared`'s timed sets under its `LaunchGuard` where it has them. `budget_s`, the
        GPU time this size may take, replaces the default rule's (a sweep point's is smaller)."""
        if config is None and budget_s is not None:
            config = timing.TimingConfig(rule=replace(stats.StopRule(), gpu_budget_s=float(budget_s)))
        from gpu_worker.measurement.gpu_lock import timing_lock

        launched = prepared.launched if prepared is not None else self._last
        if launched is None:
            raise RuntimeError("time() before launch()")
        handle, dev_args, launch_config = launched
        stream = prepared.stream if prepared is not None else None
        if stream is None:  # timed without `prepare_timed` (a test, the command line): made here
            stream = self.cp.cuda.Stream(non_blocking=True)
        with self._faults():
            launch = self._launcher(handle, dev_args, launch_config)
            guard = prepared.guard if prepared else None
            graph = prepared.graph if prepared else None
            record = timing.launches(
                launch, stream, config, self.nvml, guard=guard, exclusive=timing_lock(self.uuid), graph=graph
            )
        return TimedLaunches(prepared, stream, record)

    def finish_timing(self, timed: TimedLaunches, states: list[DeviceState | None]) -> dict[str, Any]:
        """A size's timing summary once its launches are done (`time_launches`) and the GPU let go: the guard's
        read-back, and where there were timed sets, the `checks` of what the timed launches left (compared under
        the shared kind, or inside the caller's `correctness` block). `states`: the device read around them."""
        prepared, stream = timed.prepared, timed.stream
        checks: list[CheckInfo] = []
        with self._faults():
            guarded = timing.read_guard(prepared.guard if prepared is not None else None, stream)
            if prepared is not None and prepared.check is not None and prepared.sets:
                with self.correctness():
                    for k, (values, expectation) in enumerate(zip(prepared.sets, prepared.expectations, strict=True)):
                        words = f" (timed launches, inputs {k + 1})"
                        checks += device_check.compare(self.cp, prepared.check, expectation, values, words)
        result = timing.result_of(timed.record, [s for s in states if s is not None], guarded)
        summary = timing.brief(result)
        summary["lock_wait_seconds"] = round(result["lock_wait_seconds"], 4)
        summary["lock_held_seconds"] = round(result["lock_held_seconds"], 4)  # the GPU alone: the worker's busy time
        summary["hold_phases_s"] = result["hold_phases_s"]  # where the host's time inside the hold went
        summary["sharing_wait_seconds"] = round(self.sharing_wait_s, 4)  # this job's checks so far, behind timings
        summary["device_before"] = result["device_before"]
        summary["device_after"] = result["device_after"]
        summary["method"] = "CUDA events, L2 flushed before each sample; hot = CUDA-graph replay / K"
        if prepared is not None and prepared.sets:
            summary["checks"] = [c.model_dump() for c in checks]
        return summary

    @contextlib.contextmanager
    def _faults(self) -> Iterator[None]:
        """What the learner's kernel did, in the verdict's words: a tampered expectation, a CUDA fault."""
        try:
            yield
        except device_check.Tampered as exc:
            raise LearnerError("runtime_error", TAMPERED.format(exc)) from None
        except LearnerError:
            raise
        except Exception as exc:
            _, name = fault_message(exc)
            if name is None:
                raise
            raise self._fault(exc) from None

    def occupancy(self, handle: Any, config: LaunchConfig) -> dict[str, Any]:
        """Active blocks per SM for this launch: the driver's answer beside the offline calculator's."""
        threads, dyn = config.threads_per_block, handle.shared_bytes(config)
        block = handle.block(config)
        threads = int(numpy.prod(block))
        kernel = handle.kernel
        if dyn > DEFAULT_DYNAMIC_SHARED_LIMIT:
            kernel.max_dynamic_shared_size_bytes = dyn
        attrs = dict(kernel.attributes)
        driver = self.cp.cuda.driver
        driver_blocks = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, dyn)
        out: dict[str, Any] = {"driver_blocks_per_sm": int(driver_blocks), "threads_per_block": threads}
        max_warps = self.props["maxThreadsPerMultiProcessor"] // 32
        out["driver_occupancy"] = int(driver_blocks) * -(-threads // 32) / max_warps
        try:
            from gpu_worker.science.occupancy import occupancy_from_kernel_attrs

            offline = occupancy_from_kernel_attrs(self.arch, block, attrs, dyn)
            out["offline"] = offline.model_dump()
            out["agree"] = offline.active_blocks_per_sm == int(driver_blocks)
        except Exception as exc:  # the calculator is optional here; say why it is missing
            out["offline_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return out

    def listing(self, handle: Kernel, source: str, workdir: Path) -> dict[str, Any]:
        """PTX and SASS with source lines, compiled again for reading once the job is measured."""
        from gpu_worker.backends.listing import listing

        if handle.language in ("numba", "triton"):
            return {}  # the compile process already listed its PTX and SASS (in the `compiled` event)
        return listing("cuda", source, handle.entry, self.arch, workdir, options=NVRTC_OPTIONS)

    def close(self) -> None:
        from gpu_worker.backends import compile_server

        compile_server.discard_spare()  # a spare's compiler that a CUDA C++ job never needed
        if self.faulted:
            return  # the context is dead; freeing would only raise the same error again
        with contextlib.suppress(Exception):
            self.cp.get_default_memory_pool().free_all_blocks()


def _excerpt(ptx: str, entry: str, max_lines: int = 60) -> str:
    from gpu_worker.backends import ptxas

    names = [n for n in ptxas.entries(ptx) if entry in n]
    return ptxas.excerpt(ptx, names[0] if names else entry, max_lines)


BACKEND = CudaBackend
