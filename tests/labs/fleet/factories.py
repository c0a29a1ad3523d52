"""A planned node as an admin lays one out: two H200s, one cut into MIG instances, one shared by MPS."""

from __future__ import annotations

from labs.fleet import services
from labs.fleet.plan import SliceSpec
from labs.models import Node


def h200_node(name: str = "node1") -> Node:
    """gpu0: 3g.71gb + 2 × 2g.35gb (graded); gpu1: MPS 30% + 70% (practice); gpu2 time-sliced ×3."""
    node = services.add_node(name, hostname=f"{name}.example")
    gpu0 = services.add_gpu(node, 0, "NVIDIA H200", uuid="GPU-0000")
    services.lay_out(
        gpu0,
        [
            SliceSpec(kind="mig", pool="h200.mig3g", profile="3g.71gb"),
            SliceSpec(kind="mig", pool="h200.mig2g", profile="2g.35gb"),
            SliceSpec(kind="mig", pool="h200.mig2g", profile="2g.35gb"),
        ],
    )
    gpu1 = services.add_gpu(node, 1, "h200-141gb")
    services.lay_out(
        gpu1,
        [
            SliceSpec(kind="mps", pool="h200.mps30", thread_percent=30, memory_limit_mib=40_000),
            SliceSpec(kind="mps", pool="h200.mps70", thread_percent=70),
        ],
    )
    gpu2 = services.add_gpu(node, 2, "h200-141gb")
    services.lay_out(gpu2, [SliceSpec(kind="timeslice", pool="h200.ts", replicas=3)])
    return node
