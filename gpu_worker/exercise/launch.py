"""Launch shapes: evaluate grid, block and dynamic shared memory for one size, and check device limits.

A launch that no device could run (a block over 1024 threads, a zero grid,
more shared memory than an SM has) is rejected before any code runs, with a
message that names the limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpu_worker.exercise.formula import FormulaError, size_value
from gpu_worker.protocol import LaunchSpec


@dataclass(frozen=True)
class DeviceLimits:
    """Launch limits of one device; the defaults are those of compute capability 9.0 (Hopper)."""

    max_threads_per_block: int = 1024
    max_block: tuple[int, int, int] = (1024, 1024, 64)
    max_grid: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
    max_shared_per_block: int = 232448  # 227 KiB with the opt-in; 48 KiB without it


SM90 = DeviceLimits()


class LaunchRejected(ValueError):
    """A launch shape that no run should be attempted with."""


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_bytes: int = 0

    @property
    def threads(self) -> int:
        total = 1
        for d in (*self.grid, *self.block):
            total *= d
        return total

    @property
    def threads_per_block(self) -> int:
        total = 1
        for d in self.block:
            total *= d
        return total

    def as_dict(self) -> dict[str, object]:
        return {"grid": list(self.grid), "block": list(self.block), "shared_bytes": self.shared_bytes}


def _dims(kind: str, formulas: list[str], sizes: Mapping[str, int]) -> tuple[int, ...]:
    if not 1 <= len(formulas) <= 3:
        raise LaunchRejected(f"{kind} must have 1 to 3 dimensions, not {len(formulas)}")
    try:
        return tuple(size_value(f, sizes) for f in formulas)
    except (FormulaError, ArithmeticError, TypeError) as exc:
        raise LaunchRejected(f"{kind} cannot be evaluated: {exc}") from None


def resolve_launch(spec: LaunchSpec, sizes: Mapping[str, int], limits: DeviceLimits = SM90) -> LaunchConfig:
    """Grid, block and shared bytes for these sizes, or LaunchRejected naming the limit broken."""
    block = _dims("block", spec.block, sizes)
    grid = _dims("grid", spec.grid, sizes)
    try:
        shared = size_value(spec.dynamic_shared_bytes, sizes)
    except (FormulaError, ArithmeticError, TypeError) as exc:
        raise LaunchRejected(f"dynamic shared memory cannot be evaluated: {exc}") from None
    axes = "xyz"
    for kind, dims, most in (("block", block, limits.max_block), ("grid", grid, limits.max_grid)):
        for axis, (d, m) in enumerate(zip(dims, most, strict=False)):
            if d < 1:
                raise LaunchRejected(f"{kind}.{axes[axis]} is {d}; every dimension must be at least 1")
            if d > m:
                raise LaunchRejected(f"{kind}.{axes[axis]} is {d}, over the device limit of {m}")
    config = LaunchConfig(grid=grid, block=block, shared_bytes=shared)
    if config.threads_per_block > limits.max_threads_per_block:
        raise LaunchRejected(
            f"a block of {config.threads_per_block} threads is over the limit of {limits.max_threads_per_block}"
        )
    if shared < 0 or shared > limits.max_shared_per_block:
        raise LaunchRejected(
            f"{shared} bytes of dynamic shared memory is over the limit of {limits.max_shared_per_block}"
        )
    return config
