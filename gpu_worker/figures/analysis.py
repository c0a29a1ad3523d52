"""What every submission is shown beside its verdict: occupancy with its three graphs, and the roofline.

Runs in the engine, outside the learner's reach, from facts the child reported:
the compiled kernel's registers and shared memory, the launch, and (on a GPU)
the per-size metrics. Each figure is labelled with where its numbers came from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpu_worker.figures.occupancy import occupancy_figures
from gpu_worker.figures.roofline import bandwidth_figure, roofline_figure
from gpu_worker.protocol import CompileInfo, RooflinePoint, WorkSpec
from gpu_worker.science.datasheets import datasheet_for
from gpu_worker.science.metrics import Ceilings, work_metrics
from gpu_worker.science.occupancy import occupancy

# The simulator analyses kernels for the GPU this lab's workers have: an H200 (sm_90).
SIM_TARGET = "NVIDIA H200"
SIM_ARCH = "sm_90"


def source_label(backend: str, device: str, language: str = "") -> str:
    """Which device, slice and backend a figure's numbers come from (on the CPU: the PTX executor's what-if)."""
    if backend == "sim":
        return f"PTX executor (CPU): {SIM_ARCH} what-if for an {SIM_TARGET}, not measured"
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


def _timed(per_size: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The sizes that have a measured rate, in the order given."""
    return [m for m in per_size if m.get("flop_rate") and m.get("intensity")]


def _sizes_text(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v:,}" for k, v in sizes.items())


def result_point(result: Mapping[str, Any], label: str, submission_id: int | None = None) -> RooflinePoint | None:
    """A stored result's roofline point: its largest timed size; None when untimed or above a roof (impossible)."""
    per_size = sorted((result.get("metrics") or {}).get("sizes") or [], key=lambda m: m.get("index", 0))
    timed = _timed(per_size)
    if not timed or timed[-1].get("above_roof"):
        return None
    largest = timed[-1]
    return RooflinePoint(
        intensity=largest["intensity"],
        flop_rate=largest["flop_rate"],
        label=label,
        submission_id=submission_id,
        device=str(result.get("device") or ""),
    )


def roofline(
    work: WorkSpec,
    sizes: list[dict[str, int]],
    metrics: dict[int, dict[str, Any]],
    ceilings: Ceilings | None,
    device: str,
    label: str,
    history: Sequence[RooflinePoint] = (),
    reference: RooflinePoint | None = None,
) -> dict[str, Any]:
    """The roofline with this submission's measured points, its earlier ones and the reference on this device.

    Untimed (the simulator), this submission is drawn as its intensity alone.
    Points measured on another device are left out: another GPU has other roofs.
    """
    datasheet = datasheet_for(device) or datasheet_for(SIM_TARGET)
    largest = work_metrics(work, sizes[-1])
    if largest.flops == 0:  # no place on a log intensity axis: the memory roof's own axis, bytes/s
        measured = [metrics[i] for i in sorted(metrics) if metrics[i].get("bandwidth")]
        points_bw = [(_sizes_text(m.get("sizes") or {}), float(m["bandwidth"])) for m in measured]
        figure = bandwidth_figure(label, largest.bytes, ceilings, datasheet, sizes=points_bw)
        return {"title": f"Roofline, memory axis (0 FLOP) · {label}", "figure": figure}
    timed = _timed(metrics[i] for i in sorted(metrics))
    points = [
        RooflinePoint(intensity=m["intensity"], flop_rate=m["flop_rate"], label=_sizes_text(m.get("sizes") or {}))
        for m in timed
    ]
    intensity = points[-1].intensity if points else largest.intensity
    figure = roofline_figure(
        label,
        intensity,
        ceilings,
        datasheet,
        sizes=points,
        history=[p for p in history if p.device == device],
        reference=reference if reference is not None and reference.device == device else None,
    )
    title = "Roofline" if timed else "Roofline (arithmetic intensity only: not timed)"
    return {"title": f"{title} · {label}", "figure": figure}


def warm_up() -> None:
    """Build one set of figures and throw it away: the worker's first job then does not pay Plotly's first use.

    The first occupancy graphs cost 0.17 s and the first roofline 0.1 s, later ones a tenth of that;
    the Celery worker calls this in its pool process before it takes a job.
    """
    compiled = CompileInfo(registers=16, arch=SIM_ARCH)
    calculator_occupancy(compiled, 256, 0, "warm-up")
    roofline(WorkSpec(bytes="12 * n", flops="n"), [{"n": 1024}], {}, None, SIM_TARGET, "warm-up")
