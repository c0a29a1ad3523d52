"""Lay out a kernel's parameters the way each compiler's ABI does, with the launch's arrays as buffers.

CUDA C++: one pointer per array, one value per scalar. Numba: 5 + 2 * ndim slots per array
(meminfo, parent, nitems, itemsize, data, shape..., strides...; see `backends.numba_abi`), one per
scalar. Triton: one pointer per array, one value per scalar that is not a constexpr, then two
scratch pointers (global and profile scratch), passed as null. Arrays are placed in the executor's
`GlobalMemory` as views of the caller's arrays, so the kernel's stores land in them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from gpu_worker.ptx.errors import Unsupported
from gpu_worker.ptx.memory import Buffer, GlobalMemory
from gpu_worker.ptx.program import Kernel

Abi = Literal["cuda", "numba", "triton"]


def _bytes(value: Any, size: int) -> bytes:
    return np.asarray(value).tobytes()[:size].ljust(size, b"\0")


def arguments(
    kernel: Kernel, abi: Abi, names: Sequence[str], values: Sequence[Any]
) -> tuple[list[bytes], GlobalMemory]:
    """(each parameter's bytes, the memory holding the arrays) for `values`, named `names`, in order."""
    memory = GlobalMemory()
    flat: list[bytes] = []
    for name, value in zip(names, values, strict=True):
        if isinstance(value, np.ndarray):
            if not value.flags.c_contiguous:
                raise ValueError(f"argument {name} is not C-contiguous")
            data = value.reshape(-1).view(np.uint8)
            address = memory.add(Buffer(name, data, tuple(value.shape), value.itemsize))
            if abi == "numba":
                flat += [_bytes(np.uint64(0), 8), _bytes(np.uint64(0), 8)]
                flat += [_bytes(np.int64(value.size), 8), _bytes(np.int64(value.itemsize), 8)]
                flat.append(_bytes(np.uint64(address), 8))
                flat += [_bytes(np.int64(n), 8) for n in value.shape]
                flat += [_bytes(np.int64(s), 8) for s in value.strides]
            else:
                flat.append(_bytes(np.uint64(address), 8))
        else:
            flat.append(np.asarray(value).tobytes())
    if abi == "triton":
        flat += [_bytes(np.uint64(0), 8)] * max(0, len(kernel.params) - len(flat))
    if len(flat) != len(kernel.params):
        raise Unsupported(f"{kernel.name} takes {len(kernel.params)} parameters; the {abi} layout gives {len(flat)}")
    fitted = []
    for param, raw in zip(kernel.params, flat, strict=True):
        if len(raw) > param.size:
            raw = raw[: param.size]
        fitted.append(raw.ljust(param.size, b"\0"))
    return fitted, memory
