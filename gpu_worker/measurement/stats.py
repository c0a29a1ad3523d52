"""Statistics of kernel timings: robust summaries, confidence intervals and the stopping rule.

Pure Python and NumPy, no GPU: the timing harness (`gpu_worker.measurement.timing`) feeds it
samples in milliseconds and asks two questions after each batch: "is the
estimate of the median tight enough to stop?" and "which samples were taken
while the SM clock was too low to count?". Everything here is deterministic
(the bootstrap uses a fixed seed) so results and tests are reproducible.

The stopping rule follows nvbench's noise criterion in spirit: keep sampling
until the relative half-width of the median's confidence interval (or, for
very small sample counts, the relative standard deviation of the mean) falls
under a threshold, or until the GPU-time budget for this kernel and size runs
out, whichever comes first.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

Samples = Sequence[float] | np.ndarray

#: Samples below this fraction of the SM clock's default (maximum) are dropped.
LOW_CLOCK_FRACTION = 0.75


@dataclass(frozen=True)
class Summary:
    """A robust summary of timing samples (all times in milliseconds)."""

    n: int
    median: float
    mean: float
    stdev: float
    min: float
    max: float
    q1: float
    q3: float
    iqr: float
    ci_low: float
    ci_high: float
    ci_method: str
    rel_ci_half_width: float  # (ci_high - ci_low) / 2 / median
    rel_stdev_of_mean: float  # stdev / sqrt(n) / mean
    cv: float  # stdev / mean of the samples

    def as_dict(self) -> dict[str, float | int | str]:
        return asdict(self)


def median(samples: Samples) -> float:
    """The median of the samples (the mean of the two middle ones for an even count)."""
    if len(samples) == 0:
        raise ValueError("median of no samples")
    return float(np.median(np.asarray(samples, dtype=float)))


def iqr(samples: Samples) -> tuple[float, float, float]:
    """First quartile, third quartile and their difference (linear interpolation, NumPy's default)."""
    if len(samples) == 0:
        raise ValueError("IQR of no samples")
    q1, q3 = np.percentile(np.asarray(samples, dtype=float), [25.0, 75.0])
    return float(q1), float(q3), float(q3 - q1)


def _binom_cdf_half(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exact (n <= 1000), else the normal approximation."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= 1000:
        return sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return _normal_cdf_half(k, n)


def _normal_cdf_half(k: int, n: int) -> float:
    # with continuity correction, ample for n > 1000
    z = (k + 0.5 - n / 2.0) / (math.sqrt(n) / 2.0)
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@functools.lru_cache(maxsize=4096)
def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int] | None:
    """0-based ranks (lo, hi) of the sorted samples bounding a distribution-free CI of the median.

    The interval [x_(j), x_(n-1-j)] (0-based ranks) covers the true median with
    probability 1 - 2 P(X <= j) for X ~ Binomial(n, 1/2); we take the
    largest j whose coverage is still at least `confidence`. None when n is too
    small for any such interval (n < 6 at 95%).

    The binomial's distribution function is summed as j grows (one term a step), not afresh for each j:
    that was quadratic in big integers, 0.2 s at 500 samples, and the stopping rule asks it after every
    batch, inside the timing lock (run 23: the lock held 15 x the GPU's time for a small kernel).
    """
    alpha = 1.0 - confidence
    best = None
    term, cumulative, scale = 1, 0, 2.0**n if n <= 1000 else 0.0  # term = comb(n, j)
    for j in range(0, n // 2 + 1):
        if n <= 1000:
            cumulative += term
            cdf = cumulative / scale
            term = term * (n - j) // (j + 1)
        else:
            cdf = _normal_cdf_half(j, n)
        if 2.0 * cdf <= alpha:
            best = j
        else:
            break
    if best is None or best > n - 1 - best:
        return None
    return best, n - 1 - best


def median_ci(samples: Samples, confidence: float = 0.95) -> tuple[float, float, str]:
    """A confidence interval of the median: order statistics when n allows, else a bootstrap."""
    data = np.sort(np.asarray(samples, dtype=float))
    ranks = median_ci_ranks(len(data), confidence)
    if ranks is not None:
        return float(data[ranks[0]]), float(data[ranks[1]]), "order-statistic"
    return (*bootstrap_median_ci(data, confidence), "bootstrap")


def bootstrap_median_ci(
    samples: Samples, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap CI of the median (deterministic: fixed seed)."""
    data = np.asarray(samples, dtype=float)
    if len(data) == 0:
        raise ValueError("CI of no samples")
    if len(data) == 1:
        return float(data[0]), float(data[0])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(data), size=(resamples, len(data)))
    medians = np.median(data[picks], axis=1)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(medians, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def summarize(samples: Samples, confidence: float = 0.95) -> Summary:
    """Median, IQR, CI of the median and spread measures of the samples."""
    data = np.asarray(samples, dtype=float)
    if len(data) == 0:
        raise ValueError("summary of no samples")
    med = float(np.median(data))
    mean = float(data.mean())
    stdev = float(data.std(ddof=1)) if len(data) > 1 else 0.0
    q1, q3, spread = iqr(data)
    lo, hi, method = median_ci(data, confidence)
    return Summary(
        n=len(data),
        median=med,
        mean=mean,
        stdev=stdev,
        min=float(data.min()),
        max=float(data.max()),
        q1=q1,
        q3=q3,
        iqr=spread,
        ci_low=lo,
        ci_high=hi,
        ci_method=method,
        rel_ci_half_width=(hi - lo) / 2.0 / med if med > 0 else math.inf,
        rel_stdev_of_mean=stdev / math.sqrt(len(data)) / mean if mean > 0 and len(data) > 1 else math.inf,
        cv=stdev / mean if mean > 0 else math.inf,
    )


@dataclass(frozen=True)
class StopRule:
    """When to stop sampling one kernel at one size."""

    rel_precision: float = 0.005  # CI half-width over median, as a fraction
    min_samples: int = 10
    max_samples: int = 2000
    gpu_budget_s: float = 0.35  # GPU time (kernel and flush) we may spend on this kernel and size


def should_stop(samples: Samples, gpu_seconds: float, rule: StopRule = StopRule()) -> tuple[bool, str]:
    """(stop?, why) after a batch: precise enough, out of budget, or too many samples."""
    n = len(samples)
    if n >= rule.max_samples:
        return True, "max_samples"
    if gpu_seconds >= rule.gpu_budget_s:
        return True, "budget"
    if n < rule.min_samples:
        return False, "min_samples"
    s = summarize(samples)
    if s.rel_ci_half_width <= rule.rel_precision:
        return True, "converged"
    return False, "noisy"


def low_clock_mask(
    clocks_mhz: Sequence[float], reference_mhz: float, fraction: float = LOW_CLOCK_FRACTION
) -> np.ndarray:
    """True where a sample's SM clock was under `fraction` of the reference (default or max) clock."""
    clocks = np.asarray(clocks_mhz, dtype=float)
    if reference_mhz <= 0:
        return np.zeros(len(clocks), dtype=bool)
    return clocks < fraction * reference_mhz


def drop_low_clock(
    samples: Samples, clocks_mhz: Sequence[float], reference_mhz: float, fraction: float = LOW_CLOCK_FRACTION
) -> tuple[list[float], int]:
    """The samples taken at an acceptable clock, and how many were dropped."""
    if len(samples) != len(clocks_mhz):
        raise ValueError("one clock reading per sample is needed")
    low = low_clock_mask(clocks_mhz, reference_mhz, fraction)
    kept = [float(s) for s, bad in zip(samples, low, strict=True) if not bad]
    return kept, int(low.sum())


def cv(values: Samples) -> float:
    """Coefficient of variation (sample stdev over mean) of repeated measurements."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2 or data.mean() == 0:
        return 0.0
    return float(data.std(ddof=1) / data.mean())
