"""Activation memory per transformer layer, with tensor and sequence parallelism (Korthikanti et al. 2022).

Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
Models", arXiv:2205.05198 (MLSys 2023), table 2: bytes of activations one
layer keeps for its backward pass, with 16-bit activations and 1-byte dropout
masks, for sequence length s, micro-batch b, hidden size h, a attention heads
and tensor-parallel degree t:

  no parallelism                        s b h (34 + 5 a s / h)
  tensor parallel                       s b h (10 + 24 / t + 5 a s / (h t))
  tensor + sequence parallel            s b h (34 / t + 5 a s / (h t))
  tensor parallel + selective recompute s b h (10 + 24 / t)
  tensor + sequence + selective         s b h (34 / t)
  full recompute                        s b h * 2

Sequence parallelism splits the layer norms and dropouts (the 10 that tensor
parallelism leaves replicated) along the sequence; it replaces each all-reduce
with a reduce-scatter and an all-gather of the same total bytes, so it costs no
extra communication.
"""

from __future__ import annotations

from gpu_worker.multigpu import MODEL

MODES = {
    "none": "no parallelism",
    "tp": "tensor parallel",
    "tp_sp": "tensor + sequence parallel",
    "tp_selective": "tensor parallel + selective recompute",
    "tp_sp_selective": "tensor + sequence parallel + selective recompute",
    "full": "full recompute",
}
SOURCE = "Korthikanti et al. 2022, table 2 (activation bytes per layer, 16-bit activations)"

__all__ = ["MODEL", "MODES", "SOURCE", "per_layer_bytes"]


def per_layer_bytes(mode: str, seq: int, batch: int, hidden: int, heads: int, tp: int = 1) -> float:
    """Activation bytes one layer keeps on each GPU, from Korthikanti et al. 2022, table 2."""
    if min(seq, batch, hidden, heads, tp) < 1:
        raise ValueError("sequence, batch, hidden size, heads and tensor-parallel degree must be at least 1")
    sbh = float(seq) * batch * hidden
    attention = 5.0 * heads * seq / hidden  # the a s^2 b terms: scores, softmax, its dropout mask
    if mode == "none":
        return sbh * (34 + attention)
    if mode == "tp":
        return sbh * (10 + 24 / tp + attention / tp)
    if mode == "tp_sp":
        return sbh * (34 / tp + attention / tp)
    if mode == "tp_selective":
        return sbh * (10 + 24 / tp)
    if mode == "tp_sp_selective":
        return sbh * (34 / tp)
    if mode == "full":
        return sbh * 2
    raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
