"""What every submission is shown beside its verdict: occupancy with its three graphs, and the roofline.

Runs in the engine, outside the learner's reach, from facts the child reported:
the compiled kernel's registers and shared memory, the launch, and (on a GPU)
the per-size metrics. Each figure is labelled with where its numbers came from.
"""

from __future__ import annotations

from typing import Any

from gpu_worker.datasheets import datasheet_for
from gpu_worker.figures.occupancy import occupancy_figures
from gpu_worker.figures.roofline import roofline_figure
from gpu_worker.metrics import Ceilings, work_metrics
from gpu_worker.occupancy import occupancy
from gpu_worker.protocol import CompileInfo, WorkSpec

# The simulator analyses kernels for the GPU this lab's workers have: an H200 (sm_90).
SIM_TARGET = "NVIDIA H200"
SIM_ARCH = "sm_90"


def source_label(backend: str, device: str) -> str:
    """Which device, slice and backend a figure's numbers come from."""
    if backend == "sim":
        return f"simulator (CPU): {SIM_ARCH} what-if for an {SIM_TARGET}, not measured"
    return f"{device}, cuda backend"


def calculator_occupancy(
    compiled: CompileInfo, threads_per_block: int, dynamic_shared_bytes: int, label: str
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """Theoretical occupancy from the compiled resources, and the calculator's three graphs."""
    if not compiled.registers:
        return None
    arch = compiled.arch or SIM_ARCH
    static = compiled.shared_bytes or 0
    result = occupancy(arch, threads_per_block, compiled.registers, static, dynamic_shared_bytes)
    occ = {"source": "calculator", "label": label, **result.model_dump(mode="json")}
    figures = occupancy_figures(arch, threads_per_block, compiled.registers, static + dynamic_shared_bytes, label)
    return occ, figures


def roofline(
    work: WorkSpec,
    sizes: list[dict[str, int]],
    metrics: dict[int, dict[str, Any]],
    ceilings: Ceilings | None,
    device: str,
    label: str,
) -> dict[str, Any]:
    """The roofline with this submission's measured point, or its intensity alone when it was not timed."""
    timed = [metrics[i] for i in sorted(metrics) if metrics[i].get("flop_rate") and metrics[i].get("intensity")]
    if timed:
        points = [(m["intensity"], m["flop_rate"]) for m in timed]
        intensity, achieved = points[-1]  # the largest size fills the GPU best
        earlier = points[:-1]
    else:
        intensity, achieved, earlier = work_metrics(work, sizes[-1]).intensity, None, []
    figure = roofline_figure(
        label, intensity, achieved, ceilings, datasheet_for(device) or datasheet_for(SIM_TARGET), earlier=earlier
    )
    title = "Roofline" if timed else "Roofline (arithmetic intensity only: not timed)"
    return {"title": f"{title} · {label}", "figure": figure}
