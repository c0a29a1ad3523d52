"""Launch a Numba-compiled kernel from its PTX, in a process that never imported the learner's module.

numba-cuda passes each argument of a kernel as flat parameters (its data
model, as `numba.cuda.dispatcher._Kernel._prepare_args` builds them):
- an array of `ndim` dimensions: `meminfo` (pointer, 0), `parent` (pointer, 0),
  `nitems` (intp), `itemsize` (intp), `data` (pointer), then `ndim` shape
  entries and `ndim` strides in bytes (intp each): 5 + 2 * ndim parameters;
- a scalar: one parameter of its own type.
The measuring process loads the PTX with CuPy (`RawModule(path=...)`) and
passes these values itself. `check_parameters` holds the PTX's `.entry`
parameter list to that layout (count and width) before anything launches, so a
numba-cuda that changed its ABI fails loudly as ours, never as a wrong answer.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from gpu_worker.protocol import ArgSpec

_ENTRY = r"\.entry\s+{name}\s*\((?P<params>[^)]*)\)"
_PARAM = re.compile(r"\.param\s+\.(?P<type>[busf])(?P<bits>\d+)\b")


class AbiMismatch(RuntimeError):
    """The PTX's parameters do not follow the layout this module passes (ours to fix, not the learner's)."""


def expected_widths(args: list[ArgSpec]) -> list[int]:
    """Each flat parameter's width in bits, in order."""
    widths: list[int] = []
    for arg in args:
        if arg.role == "scalar":
            widths.append(np.dtype(arg.dtype).itemsize * 8)
        else:
            widths += [64] * (5 + 2 * len(arg.shape))
    return widths


def check_parameters(ptx: str, symbol: str, args: list[ArgSpec]) -> None:
    """Raise AbiMismatch unless the entry `symbol` takes exactly the parameters `kernel_arguments` makes."""
    match = re.search(_ENTRY.format(name=re.escape(symbol)), ptx)
    if match is None:
        raise AbiMismatch(f"the PTX has no entry {symbol[:80]}")
    found = [int(m["bits"]) for m in _PARAM.finditer(match["params"])]
    wanted = expected_widths(args)
    if found != wanted:
        raise AbiMismatch(f"numba-cuda's kernel parameters changed: PTX has widths {found}, we pass {wanted}")


def kernel_arguments(args: list[ArgSpec], values: list[Any]) -> tuple[Any, ...]:
    """The flat parameter values for device arrays (CuPy) and scalars, in the exercise's order."""
    flat: list[Any] = []
    for arg, value in zip(args, values, strict=True):
        if arg.role == "scalar":
            flat.append(np.dtype(arg.dtype).type(value))
            continue
        flat += [np.uint64(0), np.uint64(0), np.int64(value.size), np.int64(value.itemsize)]
        flat.append(np.uint64(value.data.ptr))
        flat += [np.int64(n) for n in value.shape]
        flat += [np.int64(s) for s in value.strides]
    return tuple(flat)
