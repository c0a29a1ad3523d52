"""Kernel arguments born on the GPU: drawn there from the job's seed, so no problem-sized array crosses the bus.

The measuring process of the `cuda` backend judges on the device (`backends.device_check`), so the inputs
need never exist on the host: they are drawn by cuRAND's Philox4x32-10, a counter-based generator (each
value a function of the seed and its index, Salmon et al. 2011), in the stream the kernel runs in. On the
H100 (2026-12-06) NumPy drew 2 x 16.7 M float32 in 649 ms and copying them over took 435 ms; a GPU draws
them in well under a millisecond. The distributions are `inputs.make_arguments`'s (uniform in [-1, 1),
standard normal, integers in [0, 100) or [0, 1000), arange) and so are the poisoned outputs; the values are
not NumPy's (another generator), and need not be: the expected outputs are computed on the device from
these same arrays. The CPU tier keeps the host path (`inputs.make_arguments`), with the same formulas.

CuPy compiles a few small kernels for these steps (scaling, casts, fills); the worker's calibration runs
every lab's check through here into the jobs' seeded kernel cache (`device_check.compile_checks`), so a job
loads them instead of waiting on NVRTC.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gpu_worker.exercise.inputs import INT_SENTINEL, arguments, draw_dtype
from gpu_worker.protocol import ArgSpec

SCHEME = "curand-philox4x32-10/1"  # in the seed's key: a new scheme compiles its kernels into the seed again


_GENERATORS: dict[int, Any] = {}  # per device: one cuRAND generator, made once (a spare makes it before its job)


def generator(cp: Any, seed: int) -> Any:
    """cuRAND's Philox4x32-10 seeded with the job's 64-bit seed (no state set-up kernel, unlike XORWOW).

    Made once per process and device, then seeded again: a RandomState is `createGenerator` and `seed`, and
    `seed` sets both the seed and the counter's offset, so a reseeded generator draws what a new one would
    (a `gpu` test holds it to that), without cuRAND's set-up in the job's first draw."""
    from cupy.cuda import curand

    device = cp.cuda.Device().id
    kept = _GENERATORS.get(device)
    if kept is None:
        kept = _GENERATORS[device] = cp.random.RandomState(seed, method=curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
    else:
        kept.seed(seed)
    return kept


def _input_array(cp: Any, arg: ArgSpec, shape: tuple[int, ...], rng: Any) -> Any:
    dtype = np.dtype(arg.dtype)
    if arg.init == "arange":
        count = int(np.prod(shape, dtype=np.int64))
        return cp.arange(count, dtype=np.int64).astype(dtype).reshape(shape)
    if arg.init == "randint" or np.issubdtype(dtype, np.integer):
        high = 1000 if arg.init == "randint" else 100
        return rng.randint(0, high, size=shape, dtype=np.int64 if dtype.itemsize > 4 else np.int32).astype(dtype)
    if arg.init == "normal":
        return rng.standard_normal(shape, dtype=draw_dtype(dtype)).astype(dtype, copy=False)
    drawn = rng.random_sample(shape, dtype=draw_dtype(dtype))
    drawn *= 2.0
    drawn -= 1.0  # [0, 1) to [-1, 1), as on the host
    return drawn.astype(dtype, copy=False)


def poison(cp: Any, dtype: str, shape: tuple[int, ...]) -> Any:
    """A device output no correct kernel leaves as it is: NaN, or the integer sentinel (`inputs.poison`'s)."""
    if np.issubdtype(np.dtype(dtype), np.floating):
        return cp.full(shape, np.nan, dtype=dtype)
    return cp.full(shape, INT_SENTINEL.get(dtype, -1), dtype=dtype)


def make_device_arguments(
    cp: Any, args: list[ArgSpec], sizes: Mapping[str, int], seed: int, rng: Any = None
) -> dict[str, Any]:
    """Every argument by name, in the order of `args`: inputs drawn on the device, outputs poisoned there,
    scalars typed on the host (they travel in the launch's parameters). Drawn in the current stream, by `rng`
    (RandomState's `random_sample`, `standard_normal`, `randint`) if given, else the job's generator."""
    rng = rng if rng is not None else generator(cp, seed)

    def draw(arg: ArgSpec, shape: tuple[int, ...]) -> Any:
        return _input_array(cp, arg, shape, rng)

    return arguments(args, sizes, draw, lambda arg, shape: poison(cp, arg.dtype, shape))
