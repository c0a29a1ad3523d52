"""Trace every warp's global and shared-memory accesses of a kernel launch on Numba's CUDA simulator.

Module 2 of the lab teaches coalescing and bank conflicts; this is how the
`sim` backend measures them without a GPU. The simulator (numba-cuda's
`numba.cuda.simulator`) runs a launch one block at a time, each CUDA thread in
a Python `BlockThread` that knows its `blockIdx`, `threadIdx` and linear
`thread_id`. Kernel arguments reach the kernel wrapped as
`FakeWithinKernelCUDAArray` (around a `FakeCUDAArray` around a NumPy copy),
and `cuda.shared.array` returns plain NumPy arrays from the launch's
`FakeCUDAShared`. While a `MemoryTracer` is active we swap both classes, in
the simulator modules' globals, for subclasses that do the same work and also
record each element access: the thread's block and warp (`thread_id // 32`),
the load or store instruction of the learner's file that made it (code object
and bytecode offset, so `a[i] + b[i]` is two instructions), the k-th time that
thread ran it, and the byte address from the array's strides.
`gpu_worker.science.memtrace_report` then groups the accesses into warp requests and
counts sectors and bank-conflict ways.

The simulator keys shared arrays by source line, so two `cuda.shared.array`
declarations on one line alias each other there. The tracer keys each
declaration by its bytecode offset instead, and each traced array by its
identity, so the two get their own memory under the tracer.

Use it as::

    with MemoryTracer(learner_path) as tracer:
        kernel[grid, block](*args)
    report = tracer.report()

or `analyse_launch(kernel, grid, block, args, learner_path)`.

Wiring into the sim backend: run the check launch of the first `sim` size
through `analyse_launch(handle, config.grid, config.block, args, path,
shared_bytes=config.shared_bytes)` instead of `configured(*args)` in
`SimBackend.launch`, with `path = sys.modules["submission"].__file__` and the
same error handling (learner errors propagate unchanged, and the outputs are
written exactly as by a plain launch, so the check reads them as before). The
child then sends `{"type": "memory", "index": 0, "memory": report.model_dump(mode="json")}`
after the outputs, and the engine streams `Event(type="memory", **memory)`
(`memory_event(report)` builds it) and stores `Result.memory = memory`.
"""

from __future__ import annotations

import bisect
import dis
import linecache
import os
import sys
import threading
from collections.abc import Sequence
from types import CodeType, FrameType, TracebackType
from typing import Any

import numpy as np
from numba.cuda import types as nb_types
from numba.cuda.np import numpy_support
from numba.cuda.simulator import kernel as sim_kernel
from numba.cuda.simulator import kernelapi as sim_kernelapi
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray, FakeWithinKernelCUDAArray

from gpu_worker.protocol import Event
from gpu_worker.science.memtrace_report import Access, MemoryReport, Site, Space, TracedAccess, build_report

__all__ = ["MemoryReport", "MemoryTracer", "analyse_launch", "memory_event"]

DEFAULT_MAX_ACCESSES = 1_000_000  # about 150 MB of trace; a few thousand threads use far less
_GLOBAL_ALLOCATION_SPAN = 1 << 40  # each allocation gets its own 256-byte-aligned virtual range
_SHARED_ARRAY_SPAN = 1 << 24  # a multiple of 128 bytes: every shared array starts at bank 0
_WARP_SIZE = 32

_ATOMICS_FILE = sim_kernelapi.__file__
_active: MemoryTracer | None = None
_install_lock = threading.Lock()


def _pointer(ary: np.ndarray) -> int:
    return ary.__array_interface__["data"][0]


def _element_offset(ary: np.ndarray, idx: Any) -> int | None:
    """The byte offset of the one element `idx` names in `ary`; None for a view, a slice or a field."""
    shape = ary.shape
    if type(idx) is int and len(shape) == 1:  # the common case, kept short
        return (idx + shape[0] if idx < 0 else idx) * ary.strides[0]
    if type(idx) is not tuple:
        idx = (idx,)
    if len(idx) != len(shape):
        return None
    offset = 0
    for i, n, stride in zip(idx, shape, ary.strides, strict=True):
        if not isinstance(i, int | np.integer):
            return None
        if i < 0:
            i += n
        offset += int(i) * stride
    return offset


class _ThreadState:
    """What one simulated thread contributes to every record, plus its per-instruction execution counts."""

    __slots__ = ("launch", "block", "warp", "lane", "counts")

    def __init__(self, launch: int, block: tuple[int, int, int], thread_id: int):
        self.launch = launch
        self.block = block
        self.warp, self.lane = divmod(thread_id, _WARP_SIZE)
        self.counts: dict[tuple[CodeType, int, str], int] = {}


class MemoryTracer:
    """Records the global and shared-memory accesses that code in `learner_filename` makes while active."""

    def __init__(self, learner_filename: str, *, source: str | None = None, max_accesses: int = DEFAULT_MAX_ACCESSES):
        path = os.fspath(learner_filename)
        self.filename = path
        self._filenames = frozenset({path, os.path.abspath(path), os.path.realpath(path)})
        self._source_lines = source.splitlines() if source is not None else None
        self._max_accesses = max_accesses
        self._accesses: list[TracedAccess] = []
        self._site_ids: dict[tuple[CodeType, int, Access, Space], int] = {}
        self._sites: dict[object, Site] = {}
        self._starts: dict[CodeType, list[int]] = {}
        self._positions: dict[CodeType, list[tuple[int | None, int | None, int | None, int | None]]] = {}
        self._allocations: dict[int, tuple[np.ndarray, Space, int]] = {}
        self._shared_arrays = 0
        self._lock = threading.Lock()
        self._dims: dict[int, tuple[list[int], list[int]]] = {}
        self._saved: tuple[Any, Any] | None = None
        self.launches = 0
        self.truncated = False
        self.active = False

    # Installing and removing the hooks

    def __enter__(self) -> MemoryTracer:
        global _active
        with _install_lock:
            if _active is not None:
                raise RuntimeError("another MemoryTracer is already active (the simulator runs one launch at a time)")
            self._saved = (sim_kernel.FakeWithinKernelCUDAArray, sim_kernelapi.FakeCUDAShared)
            sim_kernel.FakeWithinKernelCUDAArray = _TracedArray  # type: ignore[misc]
            sim_kernelapi.FakeCUDAShared = _TracedShared  # type: ignore[misc]
            _active, self.active = self, True
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        global _active
        with _install_lock:
            assert self._saved is not None
            sim_kernel.FakeWithinKernelCUDAArray, sim_kernelapi.FakeCUDAShared = self._saved  # type: ignore[misc]
            _active, self.active = None, False

    # Called by the traced arrays

    def global_space(self, ary: np.ndarray) -> tuple[Space, int]:
        """The allocation `ary` lies in, and the virtual address of its first element."""
        root = ary
        while isinstance(root.base, np.ndarray):
            root = root.base
        with self._lock:
            found = self._allocations.get(id(root))
            if found is None:
                base = (len(self._allocations) + 1) * _GLOBAL_ALLOCATION_SPAN
                found = (root, Space("global", tuple(ary.shape), ary.itemsize), base)
                self._allocations[id(root)] = found  # holding root keeps its id from being reused
        _root, space, base = found
        return space, base + _pointer(ary) - _pointer(root)

    def shared_base(self) -> int:
        with self._lock:
            self._shared_arrays += 1
            return self._shared_arrays * _SHARED_ARRAY_SPAN

    def new_launch(self) -> None:
        with self._lock:
            self.launches += 1

    def _state(self) -> _ThreadState | None:
        thread = threading.current_thread()
        state = thread.__dict__.get("_warplab_memtrace")
        if state is None:
            thread_id = getattr(thread, "thread_id", None)
            if thread_id is None:
                return None  # not a simulated CUDA thread
            state = _ThreadState(self.launches, tuple(thread.blockIdx), thread_id)  # type: ignore[attr-defined]
            thread.__dict__["_warplab_memtrace"] = state
            if self.launches not in self._dims:
                context = sim_kernel._kernel_context
                if context is not None:
                    self._dims[self.launches] = (list(context.gridDim), list(context.blockDim))
        return state

    def record(self, space: Space, address: int, size: int, is_store: bool) -> None:
        """One thread touched `size` bytes at `address`; attribute it to the learner's instruction that did."""
        if self.truncated or not self.active:
            return
        frame: FrameType | None = sys._getframe(2)
        assert frame is not None
        access: Access = "store" if is_store else "load"
        if frame.f_code.co_filename == _ATOMICS_FILE:  # cuda.atomic.*: a read and a write, one instruction
            if not is_store:
                return
            access = "atomic"
        names = self._filenames
        while frame is not None and frame.f_code.co_filename not in names:
            frame = frame.f_back
        state = self._state() if frame is not None else None
        if state is None or frame is None:
            return
        code = frame.f_code
        starts = self._starts.get(code)
        if starts is None:
            starts = self._instruction_starts(code)
        lasti = starts[frame.f_lasti // 2]
        counted = (code, lasti, access)
        k = state.counts.get(counted, 0)
        state.counts[counted] = k + 1
        site_id = self._site_ids.get((code, lasti, access, space))
        if site_id is None:
            site_id = self._add_site(code, lasti, access, space, frame.f_lineno)
        self._accesses.append((site_id, state.launch, state.block, state.warp, k, state.lane, address, size))
        if len(self._accesses) >= self._max_accesses:
            self.truncated = True

    def _instruction_starts(self, code: CodeType) -> list[int]:
        """For each code unit, the offset of the instruction it belongs to.

        A specialised instruction (3.11's BINARY_SUBSCR_GETITEM) calls `__getitem__`
        with `f_lasti` on its last inline-cache entry, not on the instruction.
        """
        offsets = [instruction.offset for instruction in dis.get_instructions(code)]
        starts = [offsets[bisect.bisect_right(offsets, unit * 2) - 1] for unit in range(len(code.co_code) // 2)]
        self._starts[code] = starts
        return starts

    def _add_site(self, code: CodeType, lasti: int, access: Access, space: Space, lineno: int) -> int:
        with self._lock:
            key = (code, lasti, access, space)
            if key in self._site_ids:
                return self._site_ids[key]
            positions = self._positions.get(code)
            if positions is None:
                positions = self._positions[code] = list(code.co_positions())
            line, end_line, column, end_column = positions[lasti // 2] if lasti // 2 < len(positions) else (None,) * 4
            line = line or lineno
            expression = self._expression(line, end_line, column, end_column)
            site_id = len(self._site_ids)
            self._sites[site_id] = Site(line, None if column is None else column + 1, expression, access, space)
            self._site_ids[key] = site_id
            return site_id

    def _expression(self, line: int, end_line: int | None, column: int | None, end_column: int | None) -> str | None:
        """The source text of one instruction (`a[i * 2]`), when it sits on one line."""
        if column is None or end_column is None or end_line != line:
            return None
        if self._source_lines is not None:
            text = self._source_lines[line - 1] if 0 < line <= len(self._source_lines) else ""
        else:
            text = linecache.getline(self.filename, line)
        snippet = text.encode()[column:end_column].decode(errors="replace").strip()  # offsets count UTF-8 bytes
        return snippet or None

    # The result

    def report(self) -> MemoryReport:
        """Sectors per request and bank-conflict ways per load and store site, with totals."""
        grid, block = self._dims[max(self._dims)] if self._dims else ([], [])
        threads = sum(int(np.prod(g)) * int(np.prod(b)) for g, b in self._dims.values())
        return build_report(
            self._accesses,
            self._sites,
            grid=grid,
            block=block,
            launches=self.launches,
            threads=threads,
            truncated=self.truncated,
        )


class _TracedArray(FakeWithinKernelCUDAArray):
    """A kernel argument as the simulator wraps it, that also reports each element it reads or writes."""

    def __init__(self, item: FakeCUDAArray, origin: tuple[Space, int] | None = None):
        super().__init__(item)
        tracer, ary = _active, item._ary
        fields = self.__dict__  # the base class turns attribute assignment into item assignment
        fields["_ary"], fields["_tracer"], fields["_space"], fields["_base"] = ary, tracer, None, 0
        if tracer is not None and isinstance(ary, np.ndarray) and ary.dtype.fields is None:
            space, base = origin if origin is not None else tracer.global_space(ary)
            fields["_space"], fields["_base"] = space, base

    def _view(self, item: FakeCUDAArray) -> _TracedArray:
        if self._space is None or not isinstance(item._ary, np.ndarray):
            return FakeWithinKernelCUDAArray(item)  # type: ignore[return-value]  # a record or an untraced array
        return _TracedArray(item, (self._space, self._base + _pointer(item._ary) - _pointer(self._ary)))

    def __getitem__(self, idx: Any) -> Any:
        value = self._item.__getitem__(idx)
        if isinstance(value, FakeCUDAArray):
            return self._view(value)
        space = self._space
        if space is not None:
            offset = _element_offset(self._ary, idx)
            if offset is not None:
                self._tracer.record(space, self._base + offset, space.itemsize, False)
        return value

    def __setitem__(self, idx: Any, value: Any) -> None:
        self._item.__setitem__(idx, value)
        space = self._space
        if space is not None:
            offset = _element_offset(self._ary, idx)
            if offset is not None:
                self._tracer.record(space, self._base + offset, space.itemsize, True)

    def __getattr__(self, name: str) -> Any:
        value = super().__getattr__(name)
        if type(value) is FakeWithinKernelCUDAArray:  # a view such as `a.T`
            return self._view(value._item)
        return value


class _TracedSharedArray:
    """A shared-memory array (or a view of one) that reports each element it reads or writes."""

    __slots__ = ("_ary", "_space", "_base", "_tracer")

    def __init__(self, ary: np.ndarray, space: Space, base: int, tracer: MemoryTracer):
        self._ary, self._space, self._base, self._tracer = ary, space, base, tracer

    def __getitem__(self, idx: Any) -> Any:
        value = self._ary[idx]
        if isinstance(value, np.ndarray):
            return _TracedSharedArray(
                value, self._space, self._base + _pointer(value) - _pointer(self._ary), self._tracer
            )
        offset = _element_offset(self._ary, idx)
        if offset is not None:
            self._tracer.record(self._space, self._base + offset, self._ary.itemsize, False)
        return value

    def __setitem__(self, idx: Any, value: Any) -> None:
        if isinstance(value, _TracedSharedArray):
            value = value._ary
        self._ary[idx] = value
        offset = _element_offset(self._ary, idx)
        if offset is not None:
            self._tracer.record(self._space, self._base + offset, self._ary.itemsize, True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ary, name)  # shape, size, dtype, ndim ...

    def __len__(self) -> int:
        return len(self._ary)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self._ary)))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self._ary, dtype=dtype)

    def __repr__(self) -> str:
        return f"shared {self._ary!r}"


class _TracedShared(sim_kernelapi.FakeCUDAShared):
    """`cuda.shared` of one traced launch: one array per declaration, wrapped to report its accesses."""

    def __init__(self, dynshared_size: int):
        super().__init__(dynshared_size)
        self._tracer = _active
        self._traced: dict[tuple[CodeType, int], tuple[np.ndarray, Space, int]] = {}
        self._dynamic: dict[np.dtype, Space] = {}
        self._dynamic_base: int | None = None
        self._traced_lock = threading.Lock()
        if self._tracer is not None:
            self._tracer.new_launch()

    def array(self, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        tracer = self._tracer
        if tracer is None or alignment is not None:
            return super().array(shape, dtype, alignment)  # type: ignore[call-arg]  # the simulator's own behaviour and errors
        if shape == 0:  # dynamic shared memory: every declaration is a view of the same bytes
            ary = super().array(shape, dtype)
            return _TracedSharedArray(ary, *self._dynamic_space(ary), tracer)
        caller = sys._getframe(1)
        key = (caller.f_code, caller.f_lasti)  # not the line: two declarations on one line stay apart
        found = self._traced.get(key)
        if found is None:
            with self._traced_lock:
                found = self._traced.get(key)
                if found is None:
                    if isinstance(dtype, nb_types.Type):  # type: ignore[attr-defined]
                        dtype = numpy_support.as_dtype(dtype)
                    ary = np.empty(shape, dtype)
                    found = (ary, Space("shared", tuple(ary.shape), ary.itemsize), tracer.shared_base())
                    self._traced[key] = found
        return _TracedSharedArray(*found, tracer)

    def _dynamic_space(self, ary: np.ndarray) -> tuple[Space, int]:
        assert self._tracer is not None
        with self._traced_lock:
            if self._dynamic_base is None:
                self._dynamic_base = self._tracer.shared_base()
            space = self._dynamic.get(ary.dtype)
            if space is None:
                space = self._dynamic[ary.dtype] = Space("shared", tuple(ary.shape), ary.itemsize)
            return space, self._dynamic_base


def analyse_launch(
    kernel: Any,
    grid: int | Sequence[int],
    block: int | Sequence[int],
    args: Sequence[Any],
    learner_filename: str,
    *,
    shared_bytes: int = 0,
    source: str | None = None,
    max_accesses: int = DEFAULT_MAX_ACCESSES,
) -> MemoryReport:
    """Run one launch of a simulator kernel under a `MemoryTracer` and report its memory accesses.

    The launch is a normal one: outputs are written back into `args` exactly as
    without the tracer, so the sim backend can run its correctness launch (at
    the smallest sim size) through this function and check the same outputs,
    paying the tracing overhead once instead of launching twice. Learner errors
    propagate unchanged. Send the result as `memory_event(report)` and store it
    as `Result.memory = report.model_dump(mode="json")`.
    """
    if not isinstance(kernel, sim_kernel.FakeCUDAKernel):
        raise TypeError(
            "analyse_launch needs a kernel made by Numba's CUDA simulator "
            "(set NUMBA_ENABLE_CUDASIM=1 before numba is imported)"
        )
    with MemoryTracer(learner_filename, source=source, max_accesses=max_accesses) as tracer:
        kernel[grid, block, 0, shared_bytes](*args)  # four items: the simulator keeps a stale dynamic size otherwise
    return tracer.report()


def memory_event(report: MemoryReport) -> Event:
    """The `memory` event that carries a report on the submission's stream."""
    return Event(type="memory", **report.model_dump(mode="json"))
