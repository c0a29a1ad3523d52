"""The default checker: compare a kernel's output with the exercise's expected array.

On the simulator it runs in the engine, never in the sandbox, on outputs the
child sent back and an expectation the engine computed itself from
regenerated inputs, so the learner's module cannot reach or replace it. On a
GPU it runs in the measuring process, which never imports learner code, with
`xp=cupy` on device arrays (expected computed after the learner's kernel has
finished), and only the summary and the first mismatches leave the GPU. Floats pass where
`|got - expected| <= atol + rtol * |expected|` (as `np.isclose`), except that
NaN never passes, not even against NaN: outputs start as NaN, so a NaN left
in place means an element was never written. Integers must match exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_worker.exercise.inputs import poison_value
from gpu_worker.protocol import CheckInfo, Mismatch, Tolerance

MAX_MISMATCHES = 10


def _index(flat: int, shape: tuple[int, ...]) -> int | list[int]:
    if len(shape) <= 1:
        return int(flat)
    return [int(i) for i in np.unravel_index(flat, shape)]


def _summary(xp: Any, bad: Any, diff: Any) -> tuple[int, float, bool]:
    """The mismatch count, the largest difference and whether every difference is finite.

    On the device the three reductions are queued and read back together: one wait for the GPU instead of
    three (each a round trip that a busy host stretches), and nothing in between that needs the host, so a
    spare's rehearsal reaches all three kernels (`backends.rehearsal`)."""
    if not diff.size:
        return int(xp.count_nonzero(bad)), 0.0, False
    count, largest, finite = xp.count_nonzero(bad), diff.max(), xp.isfinite(diff).all()
    if xp is np:
        return int(count), float(largest), bool(finite)
    packed = xp.stack([count.astype(xp.float64), largest.astype(xp.float64), finite.astype(xp.float64)]).get()
    return int(packed[0]), float(packed[1]), bool(packed[2])


def compare(
    name: str,
    expected: np.ndarray,
    got: np.ndarray,
    tolerance: Tolerance,
    sizes: dict[str, int] | None = None,
    xp: Any = np,
) -> CheckInfo:
    """Check one output array; the first mismatches are listed with their index (NumPy or, with xp, CuPy)."""
    info = CheckInfo(passed=False, output=name, sizes=dict(sizes or {}))
    expected = xp.asarray(expected)
    got = xp.asarray(got)
    if expected.shape != got.shape:
        if expected.size == got.size:
            expected = expected.reshape(got.shape)
        else:
            info.message = f"output {name!r} has shape {list(got.shape)}, expected {list(expected.shape)}"
            return info
    integer = np.issubdtype(got.dtype, np.integer) and np.issubdtype(expected.dtype, np.integer)
    if integer:
        exp = expected.astype(np.int64)
        out = got.astype(np.int64)
        diff = xp.abs(out - exp).astype(np.float64)
        bad = out != exp
    else:
        exp = expected.astype(np.float64)
        out = got.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = xp.abs(out - exp)
            close = diff <= tolerance.atol + tolerance.rtol * xp.abs(exp)
            close |= xp.isinf(exp) & (out == exp)  # inf - inf is NaN, yet an exact inf is right
        bad = ~close | xp.isnan(out) | xp.isnan(exp)
    count, largest, finite = _summary(xp, bad, diff)
    # with a NaN or inf among the differences there is no meaningful maximum: null, not a reassuring 0.0
    info.max_abs_error = largest if finite else None
    info.mismatch_count = count
    info.passed = count == 0
    if count:
        sentinel = poison_value(str(got.dtype))
        poisoned = xp.isnan(out) if np.isnan(sentinel) else out == sentinel
        unwritten = int(xp.count_nonzero(poisoned & bad))
        first = xp.flatnonzero(bad.ravel())[:MAX_MISMATCHES]
        got_first, exp_first = out.ravel()[first], exp.ravel()[first]
        if xp is not np:  # only the first mismatches leave the device
            first, got_first, exp_first = first.get(), got_first.get(), exp_first.get()
        for flat, value, want in zip(first, got_first, exp_first, strict=True):
            never_written = np.isnan(value) if np.isnan(sentinel) else value == sentinel
            info.mismatches.append(
                Mismatch(
                    index=_index(int(flat), tuple(got.shape)),
                    expected=float(want),  # NaN and inf become null in the JSON
                    got=float(value),
                    note="never written (still the poison value)" if never_written else None,
                )
            )
        info.message = f"{count} of {bad.size} elements are wrong"
        if unwritten:
            info.message += f", {unwritten} of them never written"
    return info
