"""Interconnect and device numbers the models use, each with its source.

Published bandwidths are quoted as vendors quote them; the models use the
per-direction figure a ring step can drive. Per-step latencies are not
published by anyone: they are taken from NCCL's own tuning model, and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9  # nccl-tests and datasheets count GB/s in powers of ten


@dataclass(frozen=True)
class Link:
    """One GPU's path to its peers: bandwidth per direction (bytes/s) and latency per step (s)."""

    key: str
    name: str
    bandwidth: float  # bytes/s, one direction, per GPU
    latency: float  # seconds per algorithm step (the alpha of the alpha-beta model)
    source: str

    def label(self) -> str:
        return f"{self.name} ({self.bandwidth / GB:.0f} GB/s per direction, {self.latency * 1e6:.1f} us per step)"


NVLINK_H200 = Link(
    key="nvlink",
    name="NVLink 4 (H200 SXM)",
    # 900 GB/s is the aggregate of both directions over 18 links; a ring sends one way and receives the other.
    bandwidth=450 * GB,
    latency=3.4e-6,
    source=(
        "NVIDIA H200 Tensor Core GPU datasheet: NVLink 900 GB/s per GPU (both directions together), so 450 GB/s "
        "per direction; step latency 3.4 us from NCCL's tuning model (src/graph/tuning.cc, hwLat, NVLink, Ring/Simple)"
    ),
)

INFINIBAND_NDR = Link(
    key="infiniband",
    name="InfiniBand NDR (one 400 Gb/s ConnectX-7 per GPU)",
    bandwidth=400e9 / 8,  # 400 Gb/s is 50 GB/s each way
    latency=9.6e-6,
    source=(
        "NVIDIA ConnectX-7 / Quantum-2 NDR: 400 Gb/s per port, one port per GPU as in a DGX H100/H200 node, so 50 GB/s "
        "per direction; step latency 9.6 us from NCCL's tuning model (src/graph/tuning.cc, hwLat, NET, Ring/Simple)"
    ),
)

LINKS: dict[str, Link] = {link.key: link for link in (NVLINK_H200, INFINIBAND_NDR)}

H200_BF16_DENSE_FLOPS = 989.5e12
H200_BF16_SOURCE = "NVIDIA H200 datasheet: BF16 Tensor Core 1,979 TFLOPS with sparsity, so 989.5 TFLOPS dense"
H200_MEMORY_BYTES = 141e9
H200_MEMORY_SOURCE = "NVIDIA H200 datasheet: 141 GB HBM3e"
