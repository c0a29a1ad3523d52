"""Megatron-LM tensor parallelism: the all-reduces a transformer layer needs against its matrix work.

Shoeybi et al. 2019 ("Megatron-LM: Training Multi-Billion Parameter Language
Models Using Model Parallelism", arXiv:1909.08053, section 3 and figure 3)
split the MLP's first weight A by columns, so each GPU applies GeLU to its own
slice with no communication, and the second weight B by rows, so each GPU
holds a partial sum of the output: one all-reduce (g) after B in the forward
pass, and one (f) before A in the backward pass. Attention is split the same
way (heads by columns, the output projection by rows). So each layer costs two
all-reduces forward and two backward, each of b * s * h elements.

FLOPs per layer forward (Narayanan et al. 2021, "Efficient Large-Scale Language
Model Training on GPU Clusters Using Megatron-LM", SC21, arXiv:2104.04473,
appendix): MLP 16 b s h^2 (h -> 4h -> h), attention 8 b s h^2 + 4 b s^2 h;
backward costs twice the forward. Compute is split evenly over the t GPUs; the
all-reduces sit on the critical path (Megatron does not overlap them), so the
model adds the two times.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_worker.multigpu import MODEL
from gpu_worker.multigpu.collectives import cost
from gpu_worker.multigpu.links import Link

ALL_REDUCES_PER_LAYER_FORWARD = 2  # one after the MLP's row-parallel B, one after attention's output projection
ALL_REDUCES_PER_LAYER_BACKWARD = 2  # one before each block's column-parallel input
SOURCE = (
    "Shoeybi et al. 2019 (Megatron-LM, section 3): two all-reduces of b*s*h per layer forward, two backward; "
    "FLOPs 24bsh^2 + 4bs^2h per layer forward (Narayanan et al. 2021, appendix), backward twice that"
)


def all_reduce_bytes(batch: int, seq: int, hidden: int, bytes_per_elem: int = 2) -> int:
    """Bytes of one Megatron all-reduce: the layer's activation, b * s * h elements."""
    return batch * seq * hidden * bytes_per_elem


def mlp_flops_forward(batch: int, seq: int, hidden: int) -> float:
    """Forward FLOPs of the h -> 4h -> h MLP: two GEMMs of 2 * b s * h * 4h each."""
    return 16.0 * batch * seq * hidden**2


def attention_flops_forward(batch: int, seq: int, hidden: int) -> float:
    """Forward FLOPs of self-attention: QKV and output projections (8bsh^2) plus scores and values (4bs^2h)."""
    return 8.0 * batch * seq * hidden**2 + 4.0 * batch * seq**2 * hidden


def layer_flops_forward(batch: int, seq: int, hidden: int) -> float:
    return mlp_flops_forward(batch, seq, hidden) + attention_flops_forward(batch, seq, hidden)


@dataclass(frozen=True)
class LayerStep:
    """One transformer layer's forward and backward on each of t GPUs: compute and communication time."""

    tp: int
    link: str
    all_reduce_bytes: int
    all_reduces: int
    compute_time: float  # seconds, forward + backward, per GPU
    comm_time: float  # seconds, every all-reduce of the layer
    label: str = MODEL

    @property
    def comm_fraction(self) -> float:
        total = self.compute_time + self.comm_time
        return self.comm_time / total if total else 0.0


def layer_step(
    batch: int,
    seq: int,
    hidden: int,
    tp: int,
    link: Link,
    flops_per_gpu: float,
    efficiency: float = 1.0,
    bytes_per_elem: int = 2,
    algorithm: str = "ring",
) -> LayerStep:
    """Compute against all-reduce time of one layer, forward and backward, with tensor parallelism `tp`."""
    if tp < 1 or batch < 1 or seq < 1 or hidden < 1:
        raise ValueError("batch, sequence, hidden size and tensor-parallel degree must be at least 1")
    if not 0 < efficiency <= 1:
        raise ValueError(f"efficiency {efficiency} must be in (0, 1]")
    flops = 3.0 * layer_flops_forward(batch, seq, hidden)  # forward plus a backward twice as costly
    compute = flops / tp / (flops_per_gpu * efficiency)
    size = all_reduce_bytes(batch, seq, hidden, bytes_per_elem)
    count = ALL_REDUCES_PER_LAYER_FORWARD + ALL_REDUCES_PER_LAYER_BACKWARD
    comm = count * cost("all_reduce", algorithm, size, tp, link).time if tp > 1 else 0.0
    return LayerStep(tp, link.key, size, count if tp > 1 else 0, compute, comm)
