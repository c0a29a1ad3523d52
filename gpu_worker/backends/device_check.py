"""Check a kernel's outputs on the GPU, in the measuring process: nothing but a summary leaves the device.

The measuring process never imports learner code (`cuda` backend), so it may
judge: the exercise's expected-output expression runs with CuPy on the same
device inputs the kernel gets, `checker.compare` runs with `xp=cupy`, and only
the mismatch count and the first mismatches are copied back (a 16 M-element
output used to cross the pipe as 64 MB and be compared in NumPy).

The inputs are born on the device (`exercise.device_inputs`). The expected
arrays are computed before the learner's kernel runs, from pristine inputs,
and fingerprinted; after the kernel has finished they are fingerprinted again,
so a kernel that wrote over its inputs or over the
expected answer (it shares the device's address space) is caught, never
accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_worker.exercise import checker
from gpu_worker.exercise.device_inputs import SCHEME, make_device_arguments
from gpu_worker.exercise.formula import array_value
from gpu_worker.exercise.inputs import formula_names
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


def expected_arrays(cp: Any, spec: CheckSpec, dev_args: list[Any]) -> dict[str, Any]:
    """Each checked output's expected array, computed on the device from the inputs (queued, not waited for)."""
    names = formula_names(spec.args, spec.sizes, dev_args)
    arrays = {}
    for arg in spec.args:
        if arg.role == "out" and arg.name in spec.expected:
            arrays[arg.name] = cp.ascontiguousarray(array_value(spec.expected[arg.name], names, xp=cp))
    return arrays


def expect(cp: Any, spec: CheckSpec, dev_args: list[Any]) -> Expectation:
    """Compute the expected outputs from the inputs on the device (before the learner's kernel runs)."""
    arrays = expected_arrays(cp, spec, dev_args)
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


def check_once(cp: Any, spec: Any, sizes: dict[str, int]) -> None:
    """Run a lab's device check once at `sizes`: against its poisoned outputs (the mismatch path), then
    against the expected answer itself (the passing path)."""
    args = spec.args_for(spec.languages[0])
    # the jobs' own way to their inputs, so the seed holds the kernels that drawing them compiles too
    dev_args: list[Any] = list(make_device_arguments(cp, args, sizes, seed=1).values())
    check = CheckSpec(args=args, expected=dict(spec.expected), tolerance=spec.tolerance, sizes=sizes)
    expectation = expect(cp, check, dev_args)
    compare(cp, check, expectation, dev_args)
    for arg, value in zip(args, dev_args, strict=True):
        if arg.name in expectation.arrays:
            value[...] = expectation.arrays[arg.name].reshape(value.shape)
    compare(cp, check, expectation, dev_args)
    cp.cuda.runtime.deviceSynchronize()


def compile_checks(cp: Any, labs: list[Any] | None = None) -> list[str]:
    """Run the device check once at each GPU size of every kernel lab, so CuPy compiles each kernel it uses.

    A trusted process calls this into the jobs' seed cache (`measurement.kernel_cache.warm`), so a job's
    first check loads those binaries instead of waiting on NVRTC for every elementwise step of
    `checker.compare` (8.8 s of a cold job on the H200, run 20). The GPU sizes themselves, not the
    simulator's: run 20 found two of CuPy's kernels that a 1000-element check never compiles. Returns the
    labs whose check could not run here, each with the reason.
    """
    from gpu_worker.exercise.labspec import load_all

    problems = []
    for lab in load_all()[1] if labs is None else labs:
        spec = lab.spec
        for sizes in spec.sizes.get("cuda") or spec.sizes.get("sim") or []:
            try:
                check_once(cp, spec, sizes)
            except Exception as exc:  # a lab this GPU cannot check (a dtype it lacks) costs its own first job only
                problems.append(f"{spec.slug} at {sizes}: {type(exc).__name__}: {exc}")
                break
    cp.get_default_memory_pool().free_all_blocks()
    return problems


WARMED_FILE = "tmp-checks-compiled-for"  # `kernel_cache.prepare` copies no tmp* file into a job's folder


def checks_key(cp: Any, labs: list[Any]) -> str:
    """What the seed's check kernels depend on: CuPy, the GPU's architecture and each lab's check."""
    import hashlib
    import json

    fields = {"slug", "version", "sizes", "args", "expected", "tolerance"}
    described = [lab.spec.model_dump(mode="json", include=fields) for lab in labs]
    major, minor = cp.cuda.Device().compute_capability
    text = json.dumps([cp.__version__, f"{major}{minor}", SCHEME, described], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def warm_checks(cp: Any, folder: Path) -> list[str]:
    """`compile_checks` into the seed `folder`, unless it already did for these labs, this CuPy and GPU.

    A worker calibrates at every start; a seed that already holds every check's kernels would still cost
    every lab's inputs at every GPU size made and checked again (24 s of a worker's start, run 20).
    """
    from gpu_worker.exercise.labspec import load_all

    labs = load_all()[1]
    key = checks_key(cp, labs)
    stamp = folder / WARMED_FILE
    if stamp.is_file() and stamp.read_text() == key:
        return []
    problems = compile_checks(cp, labs)
    stamp.write_text(key)
    return problems
