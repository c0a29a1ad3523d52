"""Launch a Triton-compiled kernel from its cubin, in a process that never imported the learner's module.

Triton's own launcher (`triton/backends/nvidia/driver.py` in 3.x) passes:
- each non-constexpr argument as one parameter: a pointer (64 bits) for an
  array, the value for a scalar (its own width); constexprs are compiled in;
- then, in Triton 3.2 and later, one pointer per scratch buffer the metadata
  declares (`global_scratch_size`; and `profile_scratch_size` from 3.4 or so),
  null when the size is 0;
- as a grid of programs, each one block of `num_warps` * 32 threads (the PTX's
  `.reqntid`), with `shared` bytes of dynamic shared memory.

`read` holds the compile process's answer (untrusted: it ran learner code) to
that: the PTX's `.entry` parameters must be exactly the exercise's widths plus
one 64-bit pointer per scratch field the metadata carries, the block must be the
one the PTX requires, and features this harness does not provide (scratch
memory of non-zero size, several CTAs per program, clusters, cooperative or
programmatic-dependent launches) are refused, each said in words: a Triton whose
ABI is not this one fails loudly as ours, never as a wrong answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_worker.backends.numba_abi import _ENTRY, _PARAM, AbiMismatch
from gpu_worker.protocol import ArgSpec

SCRATCH_FIELDS = ("global_scratch_size", "profile_scratch_size")
WARPS = (1, 2, 4, 8, 16, 32)
MAX_SHARED = 232448  # an H100/H200 block's opt-in limit; Triton compiles for the target's
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
_REQNTID = re.compile(r"\.reqntid\s+(?P<x>\d+)(?:\s*,\s*(?P<y>\d+))?(?:\s*,\s*(?P<z>\d+))?")

__all__ = ["AbiMismatch", "KernelAbi", "Unsupported", "kernel_arguments", "read"]


class Unsupported(ValueError):
    """The learner's kernel needs a Triton launch feature this harness does not provide (their verdict: rejected)."""


@dataclass(frozen=True)
class KernelAbi:
    """How to launch one compiled Triton kernel."""

    name: str
    num_warps: int
    shared: int  # dynamic shared memory per block, in bytes
    scratch: int  # trailing scratch pointers (passed as null)
    triton_version: str = ""

    @property
    def threads(self) -> int:
        return self.num_warps * 32


def expected_widths(args: list[ArgSpec], scratch: int) -> list[int]:
    """Each parameter's width in bits, in order: the exercise's arguments, then the scratch pointers."""
    widths = [np.dtype(a.dtype).itemsize * 8 if a.role == "scalar" else 64 for a in args]
    return widths + [64] * scratch


def _int(meta: dict[str, Any], key: str, default: int = 0) -> int:
    value = meta.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise AbiMismatch(f"Triton's metadata field {key} is {value!r}, not a whole number")
    return value


def read(meta: dict[str, Any], ptx: str, args: list[ArgSpec]) -> KernelAbi:
    """The launch of a compiled kernel from its metadata and PTX; AbiMismatch (ours) or Unsupported (theirs)."""
    name = meta.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise AbiMismatch(f"Triton's metadata names no kernel we can load ({str(name)[:80]!r})")
    num_warps = _int(meta, "num_warps", -1)
    if num_warps not in WARPS:
        raise AbiMismatch(f"Triton's metadata says num_warps {num_warps}")
    shared = _int(meta, "shared")
    if not 0 <= shared <= MAX_SHARED:
        raise Unsupported(f"the kernel needs {shared} bytes of shared memory a block, over the {MAX_SHARED} an SM has")
    if _int(meta, "num_ctas", 1) != 1:
        raise Unsupported("the kernel asks for several CTAs per program (num_ctas); this harness launches one")
    cluster = meta.get("cluster_dims") or [1, 1, 1]
    if any(int(d) != 1 for d in cluster):
        raise Unsupported(f"the kernel asks for thread-block clusters {cluster}; this harness launches none")
    for flag, words in (("launch_cooperative_grid", "a cooperative launch"), ("launch_pdl", "programmatic launch")):
        if meta.get(flag):
            raise Unsupported(f"the kernel asks for {words} ({flag}); this harness does not provide it")
    scratch = 0
    for key in SCRATCH_FIELDS:
        if key in meta:
            scratch += 1
            if _int(meta, key):
                raise Unsupported(
                    f"the kernel needs Triton's {key.removesuffix('_size').replace('_', ' ')} memory "
                    f"({meta[key]} bytes per program; device-side tensor descriptors or printing need it), "
                    "which this harness does not provide"
                )
    match = re.search(_ENTRY.format(name=re.escape(name)), ptx)
    if match is None:
        raise AbiMismatch(f"the PTX has no entry {name[:80]}")
    found = [int(m["bits"]) for m in _PARAM.finditer(match["params"])]
    wanted = expected_widths(args, scratch)
    if found != wanted:
        raise AbiMismatch(f"Triton's kernel parameters are not understood: PTX has widths {found}, we pass {wanted}")
    body = ptx[match.end() : match.end() + 400]
    required = _REQNTID.search(body.split("{", 1)[0])
    if required is not None:
        dims = [int(d) for d in required.groups() if d]
        threads = int(np.prod(dims))
        if threads != num_warps * 32:
            raise AbiMismatch(f"the PTX requires {threads} threads a block, num_warps {num_warps} {num_warps * 32}")
    return KernelAbi(name, num_warps, shared, scratch, str(meta.get("triton_version", "")))


def kernel_arguments(args: list[ArgSpec], values: list[Any], abi: KernelAbi) -> tuple[Any, ...]:
    """The parameter values for device arrays (CuPy) and scalars, in the exercise's order, then null scratch."""
    flat: list[Any] = []
    for arg, value in zip(args, values, strict=True):
        if arg.role == "scalar":
            flat.append(np.dtype(arg.dtype).type(value))
        else:
            flat.append(np.uint64(value.data.ptr))
    return (*flat, *([np.uint64(0)] * abi.scratch))
