"""Data parallelism: the gradient all-reduce each step, against model size, GPU count and link.

Each of n replicas computes gradients for its share of the batch, then all of
them all-reduce the full gradient (PyTorch DDP, Li et al. 2020, VLDB 13(12);
Megatron's data-parallel groups): one all-reduce of params * bytes_per_grad
bytes per step. The step's compute for comparison is the usual 6 FLOPs per
parameter per token for forward and backward (Kaplan et al. 2020, "Scaling
Laws for Neural Language Models", section 2.1). DDP overlaps the all-reduce
with the backward pass in buckets, so communication is hidden when it is
shorter than the backward (two thirds of the compute).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_worker.multigpu import MODEL
from gpu_worker.multigpu.collectives import CollectiveCost, cost
from gpu_worker.multigpu.links import Link

SOURCE = (
    "one ring all-reduce of the gradient per step (PyTorch DDP, Li et al. 2020); compute 6 FLOPs per parameter "
    "per token (Kaplan et al. 2020)"
)


@dataclass(frozen=True)
class DataParallelStep:
    params: float
    n: int
    link: str
    all_reduce: CollectiveCost
    compute_time: float  # seconds per step per GPU
    label: str = MODEL

    @property
    def exposed_comm_time(self) -> float:
        """Communication left over after overlapping it with the backward pass (2/3 of the compute)."""
        return max(0.0, self.all_reduce.time - 2.0 / 3.0 * self.compute_time)


def gradient_all_reduce(
    params: float, n: int, link: Link, bytes_per_grad: int = 2, algorithm: str = "ring"
) -> CollectiveCost:
    """The all-reduce of every gradient once: params * bytes_per_grad bytes among n GPUs."""
    if params <= 0:
        raise ValueError("a model needs a positive number of parameters")
    return cost("all_reduce", algorithm, params * bytes_per_grad, n, link)


def step(
    params: float,
    n: int,
    link: Link,
    tokens_per_gpu: int,
    flops_per_gpu: float,
    efficiency: float = 1.0,
    bytes_per_grad: int = 2,
) -> DataParallelStep:
    """One training step of data parallelism: gradient all-reduce against the forward and backward."""
    if tokens_per_gpu < 1 or not 0 < efficiency <= 1:
        raise ValueError("tokens per GPU must be at least 1 and efficiency in (0, 1]")
    compute = 6.0 * params * tokens_per_gpu / (flops_per_gpu * efficiency)
    return DataParallelStep(params, n, link.key, gradient_all_reduce(params, n, link, bytes_per_grad), compute)
