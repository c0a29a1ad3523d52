"""Check a kernel's outputs on the GPU, in the measuring process: nothing but a summary leaves the device.

The measuring process never imports learner code (`cuda` backend), so it may
judge: the exercise's expected-output expression runs with CuPy on the same
device inputs the kernel gets, `checker.compare` runs with `xp=cupy`, and only
the mismatch count and the first mismatches are copied back (a 16 M-element
output used to cross the pipe as 64 MB and be compared in NumPy).

The expected arrays are computed before the learner's kernel runs, from
pristine inputs, and fingerprinted; after the kernel has finished they are
fingerprinted again, so a kernel that wrote over its inputs or over the
expected answer (it shares the device's address space) is caught, never
accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpu_worker.exercise import checker
from gpu_worker.exercise.formula import array_value
from gpu_worker.measurement.launch_guard import fingerprint_kernel
from gpu_worker.protocol import ArgSpec, CheckInfo, Tolerance


class Tampered(Exception):
    """The expected answer changed while the learner's kernel ran."""


@dataclass
class CheckSpec:
    """What to compare, from the exercise's harness (sent by the engine)."""

    args: list[ArgSpec]
    expected: dict[str, str]
    tolerance: Tolerance = field(default_factory=Tolerance)
    sizes: dict[str, int] = field(default_factory=dict)


def fingerprint(cp: Any, array: Any) -> int:
    """The device fingerprint of one array (`launch_guard`), read back."""
    slot = cp.zeros(1, dtype=cp.uint64)
    words = array.nbytes // 4
    blocks = max(1, min(1024, -(-words // 256)))
    fingerprint_kernel(cp)((blocks,), (256,), (cp.ascontiguousarray(array), cp.uint64(words), slot))
    return int(slot.get()[0])


@dataclass
class Expectation:
    """The expected outputs for one set of device inputs, and their fingerprints when they were made."""

    arrays: dict[str, Any]
    marks: dict[str, int]


def expect(cp: Any, spec: CheckSpec, dev_args: list[Any]) -> Expectation:
    """Compute the expected outputs from the inputs on the device (before the learner's kernel runs)."""
    names = {a.name: v for a, v in zip(spec.args, dev_args, strict=True) if a.role != "out"}
    arrays = {}
    for arg in spec.args:
        if arg.role == "out" and arg.name in spec.expected:
            arrays[arg.name] = cp.ascontiguousarray(array_value(spec.expected[arg.name], names, xp=cp))
    return Expectation(arrays, {name: fingerprint(cp, a) for name, a in arrays.items()})


def compare(
    cp: Any, spec: CheckSpec, expectation: Expectation, dev_args: list[Any], label: str = ""
) -> list[CheckInfo]:
    """Each output against its expectation; raises Tampered when an expectation changed meanwhile."""
    for name, array in expectation.arrays.items():
        if fingerprint(cp, array) != expectation.marks[name]:
            raise Tampered(name)
    outputs = {a.name: v for a, v in zip(spec.args, dev_args, strict=True) if a.role == "out"}
    found = []
    for name, expected in expectation.arrays.items():
        info = checker.compare(name + label, expected, outputs[name], spec.tolerance, spec.sizes, xp=cp)
        found.append(info)
    return found
