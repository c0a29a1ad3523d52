"""A synthetic deep-learning job trace with the shape production traces are reported to have.

SYNTHETIC, not a real trace. The published analyses of Microsoft's Philly
cluster (Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for
DNN Training Workloads", USENIX ATC 2019) and SenseTime's Helios clusters (Hu
et al., "Characterization and Prediction of Deep Learning Workloads in
Large-Scale GPU Datacenters", SC 2021) describe the shape we copy: most jobs
ask for a single GPU and a few for 8 or more; durations are heavy-tailed, from
minutes to days, so a few long jobs hold most of the GPU time. The parameters
below are ours, chosen to show that shape on a 32-GPU cluster; they are not
numbers taken from either paper.

Arrivals are a Poisson process whose rate gives the requested offered load
(GPU-minutes asked per GPU-minute of cluster). Standard library only
(`random.Random(seed)`), so a seed gives the same trace on every machine.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

# GPUs per job and the share of jobs asking for that many (ours)
GPU_MIX: tuple[tuple[int, float], ...] = ((1, 0.70), (2, 0.10), (4, 0.10), (8, 0.07), (16, 0.03))
# On a MIG cluster (`gpu_worker.datacenter.mig`): compute slices of the one instance a job asks for (ours)
MIG_MIX: tuple[tuple[int, float], ...] = ((1, 0.45), (2, 0.20), (3, 0.15), (4, 0.10), (7, 0.10))
DURATION_MEDIAN_MINUTES = 20.0  # log-normal: median 20 min, sigma 1.6 (p99 about 14 h), cut at 3 days
DURATION_SIGMA = 1.6
DURATION_RANGE_MINUTES = (1.0, 3 * 24 * 60.0)
SOURCE = (
    "synthetic trace shaped like the published statistics of Philly (Jeon et al., ATC 2019) and "
    "Helios (Hu et al., SC 2021): mostly 1-GPU jobs, heavy-tailed durations; parameters ours"
)


@dataclass(frozen=True)
class TraceJob:
    """One job of a trace: when it arrives, how many GPUs it needs at once, how long it runs on them."""

    id: int
    submit: float  # minutes from the start of the trace
    gpus: int
    duration: float  # minutes of running on its GPUs, uninterrupted
    sm: float = 0.0  # on an MPS cluster: the fraction of the SMs it keeps busy alone (gpu_worker.datacenter.mps)
    bw: float = 0.0  # ... and the fraction of the HBM bandwidth

    def as_list(self) -> list[float | int]:
        row: list[float | int] = [self.id, self.submit, self.gpus, self.duration]
        return [*row, self.sm, self.bw] if self.sm or self.bw else row

    @classmethod
    def from_list(cls, row: list[float | int]) -> TraceJob:
        demands = (float(row[4]), float(row[5])) if len(row) >= 6 else (0.0, 0.0)
        return cls(int(row[0]), float(row[1]), int(row[2]), float(row[3]), *demands)


def mean_gpu_minutes(mix: tuple[tuple[int, float], ...] = GPU_MIX) -> float:
    """E[gpus x duration] of one job, ignoring the cut (the log-normal mean is median x exp(sigma^2 / 2))."""
    mean_gpus = sum(g * p for g, p in mix)
    return mean_gpus * DURATION_MEDIAN_MINUTES * math.exp(DURATION_SIGMA**2 / 2)


def synthetic_trace(
    seed: int, jobs: int, cluster_gpus: int, load: float = 0.9, mix: tuple[tuple[int, float], ...] = GPU_MIX
) -> list[TraceJob]:
    """`jobs` jobs in arrival order; no job asks for more GPUs than the cluster has.

    `cluster_gpus` is what the load is offered against: GPUs, or with `MIG_MIX` compute slices.
    """
    rng = random.Random(seed)
    rate = load * cluster_gpus / mean_gpu_minutes(mix)  # jobs per minute
    sizes, weights = [g for g, _ in mix], [p for _, p in mix]
    low, high = DURATION_RANGE_MINUTES
    now, trace = 0.0, []
    for job_id in range(jobs):
        if job_id:
            now += rng.expovariate(rate)
        gpus = min(rng.choices(sizes, weights)[0], cluster_gpus)
        duration = min(max(rng.lognormvariate(math.log(DURATION_MEDIAN_MINUTES), DURATION_SIGMA), low), high)
        trace.append(TraceJob(job_id, round(now, 2), gpus, round(duration, 2)))
    return trace


# On an MPS cluster (`gpu_worker.datacenter.mps`): one-GPU jobs of three kinds, each with the share of the SMs
# and of the HBM bandwidth it uses alone, drawn uniformly from these ranges (ours, not measured):
# kind, share of jobs, (sm low, sm high), (bw low, bw high)
MPS_KINDS: tuple[tuple[str, float, tuple[float, float], tuple[float, float]], ...] = (
    ("small", 0.30, (0.10, 0.40), (0.05, 0.30)),  # notebooks, inference at low load, small models
    ("memory-bound", 0.35, (0.40, 0.80), (0.70, 1.00)),  # streaming, embeddings, optimiser steps
    ("compute-bound", 0.35, (0.80, 1.00), (0.15, 0.40)),  # large GEMMs and convolutions
)


def mps_trace(seed: int, jobs: int, cluster_gpus: int, load: float = 1.5) -> list[TraceJob]:
    """`jobs` one-GPU jobs in arrival order, each with its SM and bandwidth shares; load is in whole GPUs."""
    rng = random.Random(seed)
    rate = load * cluster_gpus / mean_gpu_minutes(((1, 1.0),))
    low, high = DURATION_RANGE_MINUTES
    weights = [share for _, share, _, _ in MPS_KINDS]
    now, trace = 0.0, []
    for job_id in range(jobs):
        if job_id:
            now += rng.expovariate(rate)
        _, _, (sm_low, sm_high), (bw_low, bw_high) = rng.choices(MPS_KINDS, weights)[0]
        duration = min(max(rng.lognormvariate(math.log(DURATION_MEDIAN_MINUTES), DURATION_SIGMA), low), high)
        sm, bw = rng.uniform(sm_low, sm_high), rng.uniform(bw_low, bw_high)
        trace.append(TraceJob(job_id, round(now, 2), 1, round(duration, 2), round(sm, 3), round(bw, 3)))
    return trace
