"""What a kernel achieved, from the exercise's declared work over its median time.

Bytes and FLOPs are the exercise's compulsory traffic and arithmetic (formulas
of the size in `lab.yaml`), so bandwidth and the roofline point come from the
exercise, not from guesses. A result above a roof is flagged as impossible.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from gpu_worker.exercise.formula import number_value
from gpu_worker.protocol import WorkSpec

# Timing noise lets a kernel at its roof read a little above it; beyond this it is not physics.
ROOF_TOLERANCE = 1.05


class Ceilings(BaseModel):
    """A slice's measured ceilings (calibration), in bytes/s and FLOP/s."""

    source: str  # e.g. "measured on NVIDIA H200 (full GPU), 2026-12-02"
    copy_bandwidth: float
    fp32: float
    bf16_tensor: float | None = None


class WorkMetrics(BaseModel):
    sizes: dict[str, int]
    bytes: float
    flops: float
    intensity: float | None  # FLOP per byte
    median_seconds: float | None = None
    bandwidth: float | None = None  # bytes/s
    flop_rate: float | None = None  # FLOP/s
    bandwidth_pct: float | None = None  # of the measured copy bandwidth
    flop_pct: float | None = None  # of the measured FP32 rate
    above_roof: bool = False
    verdict: str = ""  # a plain sentence for the learner


def work_metrics(
    work: WorkSpec, sizes: Mapping[str, int], median_seconds: float | None = None, ceilings: Ceilings | None = None
) -> WorkMetrics:
    """Declared work at these sizes; with a time, achieved rates; with ceilings, % of them and the roof check."""
    nbytes, flops = number_value(work.bytes, sizes), number_value(work.flops, sizes)
    m = WorkMetrics(sizes=dict(sizes), bytes=nbytes, flops=flops, intensity=flops / nbytes if nbytes else None)
    if not median_seconds or median_seconds <= 0:
        m.verdict = f"{nbytes / 1e6:.3g} MB moved and {flops / 1e6:.3g} MFLOP: {m.intensity or 0:.3g} FLOP/byte."
        return m
    m.median_seconds = median_seconds
    m.bandwidth, m.flop_rate = nbytes / median_seconds, flops / median_seconds
    if ceilings is None:
        m.verdict = f"{m.bandwidth / 1e9:.1f} GB/s, {m.flop_rate / 1e9:.1f} GFLOP/s (no measured ceilings)."
        return m
    m.bandwidth_pct = 100 * m.bandwidth / ceilings.copy_bandwidth
    m.flop_pct = 100 * m.flop_rate / ceilings.fp32
    if flops:
        m.above_roof = m.flop_rate > ROOF_TOLERANCE * min(ceilings.fp32, (m.intensity or 0) * ceilings.copy_bandwidth)
    else:
        m.above_roof = m.bandwidth > ROOF_TOLERANCE * ceilings.copy_bandwidth
    if m.above_roof:
        m.verdict = (
            "This result is above the roof, which no kernel can reach: the timing is wrong or the kernel did "
            "less work than the exercise declares. It is not counted."
        )
    else:
        bound = "memory" if (m.intensity or 0) * ceilings.copy_bandwidth < ceilings.fp32 else "compute"
        m.verdict = (
            f"{m.bandwidth / 1e9:.0f} GB/s = {m.bandwidth_pct:.0f}% of this slice's measured copy bandwidth; "
            f"{m.flop_rate / 1e9:.0f} GFLOP/s = {m.flop_pct:.1f}% of its FP32 rate. The kernel is {bound}-bound."
        )
    return m
