"""A spare's rehearsal: a job's first-use costs paid before the job arrives, with nothing run on the GPU.

Under a class's load the per-GPU lock, not the GPU, set the pace (run 24): a fresh measuring process paid,
inside its first size's hold of the lock, for every CuPy kernel it used for the first time (the draws, the
expected outputs, the comparisons: each looked up in the kernel cache and loaded as a module), for a new
cuRAND generator at every draw and for its first NVRTC compile. Uncontended, a warm job's first size held
the lock's shared kind 0.16 s and its later sizes 0.003 s; under 8 learners every timing waited behind
those holds.

A spare does that work while it waits for its job: the worker hands it the check of the lab it last served
(`describe`: the lab's arguments, expected formulas, tolerance and the job's sizes, all the worker's own,
never a learner's source), and the spare runs that check's correctness steps (`device_check`: inputs made,
expected outputs computed, outputs compared) on a stream in capture mode. A capturing stream records its
work into a graph instead of running it; the graph is thrown away. So CuPy compiles or loads and keeps each
kernel, and the GPU runs nothing: a rehearsal can never land inside another job's timing, and it takes no
lock. CuPy refuses cuRAND on a capturing stream (run 25), so the rehearsal's draws are empty arrays of the
shapes and dtypes cuRAND returns, followed by the job's own scaling, casts and poison; the generator itself
is made outside the capture and kept for the job. A step that needs the GPU's answer (a read-back) fails in
capture mode; the rehearsal stops that step there and goes on with the next, so each step's kernels up to
its first read-back are warmed (`checker.compare` reads its three results in one go for that reason). A job
of another lab finds fewer kernels warm, no worse off than without a rehearsal.

The spare also makes the job's `CudaBackend` (NVML, the device's identity), the timing harness's buffers
and the occupancy calculator's import, and compiles a throwaway kernel with NVRTC (loading NVRTC and its
headers), so a CUDA C++ job's compile starts warm.
The rehearsal stops between steps as soon as the job's request arrives (`interrupted`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

MAX_SIZES = 4  # sizes rehearsed (a lab times three; a sweep's points share the graded size's kernels)
MAX_ARGV_BYTES = 16 * 1024  # the description travels in the spare's argv; a lab's check is a few hundred bytes


def describe(harness: Any, language: str, runs: list[dict[str, Any]]) -> str | None:
    """The rehearsal for a spare that will likely serve this lab next: its check at the job's sizes, as JSON.

    Engine side (no CuPy). None when there is nothing to rehearse (no expected outputs: a policy, a function,
    an exercise judged on the host) or the description would be oversized."""
    if not harness.expected:
        return None
    sizes: list[dict[str, int]] = []
    for run in runs:
        size = {k: int(v) for k, v in (run.get("sizes") or {}).items()}
        if size and size not in sizes:
            sizes.append(size)
    if not sizes:
        return None
    text = json.dumps(
        {
            "args": [a.model_dump(mode="json") for a in harness.args_for(language)],
            "expected": dict(harness.expected),
            "tolerance": harness.tolerance.model_dump(mode="json"),
            "sizes": sizes[:MAX_SIZES],
            "language": language,
        },
        separators=(",", ":"),
    )
    return text if len(text) <= MAX_ARGV_BYTES else None


def parse(text: str) -> dict[str, Any]:
    """`describe`'s JSON back as the check to rehearse: {'checks': [CheckSpec per size], 'language': str}."""
    from gpu_worker.backends.device_check import CheckSpec
    from gpu_worker.protocol import ArgSpec, Tolerance

    raw = json.loads(text)
    args = [ArgSpec.model_validate(a) for a in raw["args"]]
    tolerance = Tolerance.model_validate(raw["tolerance"])
    expected = {str(k): str(v) for k, v in dict(raw["expected"]).items()}
    checks = [
        CheckSpec(args=args, expected=expected, tolerance=tolerance, sizes={str(k): int(v) for k, v in s.items()})
        for s in list(raw["sizes"])[:MAX_SIZES]
    ]
    return {"checks": checks, "language": str(raw.get("language") or "")}


@contextmanager
def _recorded_only(cp: Any, stream: Any) -> Iterator[None]:
    """`stream` capturing (relaxed mode: CuPy's memory pool may still allocate) and current: what is queued on it
    is recorded, never run. The graph is dropped; a capture that a read-back invalidated just ends."""
    stream.begin_capture(mode=cp.cuda.runtime.streamCaptureModeRelaxed)
    try:
        with stream:
            yield
    finally:
        with contextlib.suppress(Exception):  # invalidated by the step's read-back: the capture is over all the same
            stream.end_capture()


def _steps(cp: Any, check: Any) -> Iterator[tuple[str, Callable[[], None]]]:
    """The correctness steps of one size, as a job takes them: draw, expect, compare (each to its read-back)."""
    from gpu_worker.backends import device_check
    from gpu_worker.exercise import checker
    from gpu_worker.exercise.device_inputs import make_device_arguments

    made: dict[str, Any] = {}

    def draw() -> None:  # cuRAND refuses a capturing stream: arrays as it would return them, then the job's steps
        drawn = make_device_arguments(cp, check.args, check.sizes, seed=1, rng=_Undrawn(cp))
        made["args"] = list(drawn.values())

    def expect() -> None:  # `device_check.expect` without its fingerprints (their kernel is the spare's already)
        made["expected"] = device_check.expected_arrays(cp, check, made["args"])

    def compare() -> None:  # against the poisoned outputs: a passing job's kernels, up to the one read-back
        outputs = {a.name: v for a, v in zip(check.args, made["args"], strict=True) if a.role == "out"}
        for name, expected in made["expected"].items():
            checker.compare(name, expected, outputs[name], check.tolerance, check.sizes, xp=cp)

    yield "draw", draw
    yield "expect", expect
    yield "compare", compare


class _Undrawn:
    """RandomState's draws as empty arrays of the shape and dtype it returns: CuPy refuses cuRAND on a capturing
    stream, and what a rehearsal needs is the kernels that follow the draw (scaling, casts, poison, formulas)."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp

    def random_sample(self, size: Any, dtype: Any = float) -> Any:
        return self.cp.empty(size, dtype=dtype)

    def standard_normal(self, size: Any, dtype: Any = float) -> Any:
        return self.cp.empty(size, dtype=dtype)

    def randint(self, low: int, high: int, size: Any, dtype: Any = int) -> Any:
        return self.cp.empty(size, dtype=dtype)


NVRTC_WARM_SOURCE = 'extern "C" __global__ void warplab_rehearsal_{tag}(float* x) {{ x[threadIdx.x] += 1.0f; }}'


def _warm_nvrtc(cp: Any) -> None:
    """One NVRTC compile of a throwaway kernel (a name of its own, so CuPy's cache cannot answer it)."""
    from gpu_worker.backends.cuda import NVRTC_OPTIONS

    tag = f"{os.getpid()}"
    module = cp.RawModule(code=NVRTC_WARM_SOURCE.format(tag=tag), options=NVRTC_OPTIONS)
    module.get_function(f"warplab_rehearsal_{tag}")


def rehearse(backend: Any, rehearsal: dict[str, Any] | None, interrupted: Callable[[], bool]) -> list[str]:
    """Warm `backend` (a `CudaBackend`) for a job like the rehearsal's; returns what failed, in words.

    Failures are expected where a step reads back (capture mode refuses it) and say nothing then; any other
    failure is reported for the worker's log, and the job does that part itself."""
    cp = backend.cp
    problems: list[str] = []
    language = (rehearsal or {}).get("language", "cuda")
    if language == "cuda" and not interrupted():
        try:
            _warm_nvrtc(cp)
        except Exception as exc:
            problems.append(f"nvrtc: {type(exc).__name__}: {exc}"[:300])
    import gpu_worker.science.occupancy  # noqa: F401  (the size's occupancy figure, inside its first hold)
    from gpu_worker.exercise.device_inputs import generator
    from gpu_worker.measurement import timing

    generator(cp, 1)  # cuRAND's generator made outside any capture (the job seeds it again)
    try:
        timing.prepare_harness(cp, backend.nvml)  # the flush buffer and the blocking kernel's pinned flag
    except Exception as exc:
        problems.append(f"timing harness: {type(exc).__name__}: {exc}"[:300])
    stream = cp.cuda.Stream(non_blocking=True)
    for check in (rehearsal or {}).get("checks", []):
        for name, step in _steps(cp, check):
            if interrupted():
                return problems
            try:
                with _recorded_only(cp, stream):
                    step()
            except Exception as exc:
                if not _capture_refusal(exc):
                    problems.append(f"{name} at {check.sizes}: {type(exc).__name__}: {exc}"[:300])
                if name != "compare":
                    break  # a step stopped early: the next ones lack its arrays
            finally:
                if stream.is_capturing():  # never left capture mode: a stream of its own for the next step
                    stream = cp.cuda.Stream(non_blocking=True)
    del stream
    cp.get_default_memory_pool().free_all_blocks()  # the rehearsal's arrays, on a stream no job uses
    return problems


def _capture_refusal(exc: BaseException) -> bool:
    """Whether `exc` is a step refused because its stream was capturing: a read-back (CUDA's own error, or CuPy's
    'the current stream is capturing, so D2H transfers are disallowed'), the expected end of a step."""
    return "captur" in str(exc).lower()
