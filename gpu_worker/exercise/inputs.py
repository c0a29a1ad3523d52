"""Kernel arguments made from an exercise's harness, the same way on both sides of the sandbox.

The child makes the inputs to launch the learner's kernel; the engine makes
them again, outside the learner's reach, to compute the expected outputs. Both
use `make_arguments` with the same seed, so they agree bit for bit. The seed
is fresh per job (harness seed, submission id, size index), so a learner
cannot hard-code the answer for inputs seen in an earlier run. Outputs start
poisoned (NaN for floats, a sentinel for integers), so an element the kernel
never wrote cannot pass by luck.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from gpu_worker.exercise.formula import size_value
from gpu_worker.protocol import ArgSpec

INT_SENTINEL = {"int32": -0x5A5A5A5A, "int64": -0x5A5A5A5A5A5A5A5A, "uint32": 0xA5A5A5A5}


def job_seed(harness_seed: int, submission_id: int, size_index: int) -> int:
    """A 64-bit seed unique to this exercise, submission and size."""
    sequence = np.random.SeedSequence([harness_seed & 0xFFFFFFFF, submission_id & 0xFFFFFFFFFFFF, size_index])
    low, high = (int(w) for w in sequence.generate_state(2, dtype=np.uint32))
    return low | high << 32


def shape_of(arg: ArgSpec, sizes: Mapping[str, int]) -> tuple[int, ...]:
    """The array's shape for these sizes (formulas evaluated)."""
    return tuple(size_value(s, sizes) for s in arg.shape)


def poison(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """An output buffer no correct kernel leaves as it is: NaN, or the integer sentinel."""
    if np.issubdtype(np.dtype(dtype), np.floating):
        return np.full(shape, np.nan, dtype=dtype)
    return np.full(shape, INT_SENTINEL.get(dtype, -1), dtype=dtype)


def poison_value(dtype: str) -> float:
    """The value `poison` fills with, for telling 'never written' apart."""
    return float("nan") if np.issubdtype(np.dtype(dtype), np.floating) else float(INT_SENTINEL.get(dtype, -1))


def draw_dtype(dtype: np.dtype) -> type[np.floating]:
    """The float type to draw in: the array's own when NumPy's generator has it, else float32 then cast."""
    return np.float64 if dtype == np.float64 else np.float32


def _input_array(arg: ArgSpec, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    # Drawn straight in the array's precision: a 16 M-element float32 input drawn as float64 and cast took
    # 0.35 s, and a GPU size makes its inputs three times (the check and two timed input sets).
    dtype = np.dtype(arg.dtype)
    integer = np.issubdtype(dtype, np.integer)
    if arg.init == "arange":
        count = int(np.prod(shape, dtype=np.int64))
        return np.arange(count).astype(dtype).reshape(shape)
    if arg.init == "randint" or integer:
        high = 1000 if arg.init == "randint" else 100
        drawn_int = rng.integers(0, high, size=shape, dtype=np.int64 if dtype.itemsize > 4 else np.int32)
        return drawn_int.astype(dtype, copy=False)
    if arg.init == "normal":
        return rng.standard_normal(shape, dtype=draw_dtype(dtype)).astype(dtype, copy=False)
    drawn = rng.random(shape, dtype=draw_dtype(dtype))
    drawn *= 2.0
    drawn -= 1.0  # [0, 1) to [-1, 1): exact in binary floating point
    return drawn.astype(dtype, copy=False)


def make_arguments(args: list[ArgSpec], sizes: Mapping[str, int], seed: int) -> dict[str, object]:
    """Every argument by name, in the order of `args`: inputs filled, outputs poisoned, scalars typed.

    Inputs are drawn in argument order from one generator, so adding an output
    or a scalar does not change the inputs.
    """
    rng = np.random.default_rng(seed)
    return arguments(
        args, sizes, lambda arg, shape: _input_array(arg, shape, rng), lambda arg, shape: poison(arg.dtype, shape)
    )


def arguments(
    args: list[ArgSpec],
    sizes: Mapping[str, int],
    draw: Callable[[ArgSpec, tuple[int, ...]], object],
    poisoned: Callable[[ArgSpec, tuple[int, ...]], object],
) -> dict[str, object]:
    """Every argument by name, in the order of `args`: `draw` makes each input, `poisoned` each output (on the
    host, or on a device: `device_inputs`), scalars typed on the host from their formulas."""
    values: dict[str, object] = {}
    for arg in args:
        if arg.role == "scalar":
            if arg.value is None:
                raise ValueError(f"scalar argument {arg.name!r} has no value formula")
            values[arg.name] = np.dtype(arg.dtype).type(size_value(arg.value, sizes))
        elif arg.role == "in":
            values[arg.name] = draw(arg, shape_of(arg, sizes))
        else:
            values[arg.name] = poisoned(arg, shape_of(arg, sizes))
    return values


def formula_names(args: list[ArgSpec], sizes: Mapping[str, int], values: Sequence[object]) -> dict[str, object]:
    """What an `expected` formula may read: the sizes, then the inputs and the scalars among `values`
    (one per argument, host or device arrays)."""
    return {**sizes, **{a.name: v for a, v in zip(args, values, strict=True) if a.role != "out"}}


def input_arrays(args: list[ArgSpec], sizes: Mapping[str, int], seed: int) -> dict[str, object]:
    """What an `expected` formula may read, from the host inputs of `seed`."""
    return formula_names(args, sizes, list(make_arguments(args, sizes, seed).values()))
