"""An exercise's performance goals judged against what the run measured, with hints drawn from the measurement.

A lab declares what "done" means beyond correct (`GoalSpec` in `lab.yaml`'s
`goals`). Only an accepted run is judged, and each goal only on a backend that
measures its figure: the simulator's memory trace gives sectors per request
and bank-conflict ways, the occupancy calculator gives occupancy on every
backend, and a GPU's timing against the slice's calibrated ceilings gives the
% of the roof. A goal whose figure is missing (no ceilings, nothing timed) is
listed as not measured and counts neither way. The verdict stays `accepted`;
the message says "not yet fast" and why, and each missed goal carries a hint
that quotes the measurement (the line, the sectors, the limiter, the roof).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from gpu_worker.exercise.formula import number_value
from gpu_worker.protocol import GoalSpec, WorkSpec

#: Which backends measure each figure.
BACKENDS: dict[str, frozenset[str]] = {
    "sectors_per_request": frozenset({"sim"}),
    "bank_conflict_ways": frozenset({"sim"}),
    "lanes_per_request": frozenset({"sim"}),
    "traffic_ratio": frozenset({"sim"}),
    "occupancy_percent": frozenset({"sim", "cuda"}),
    "roof_percent": frozenset({"cuda"}),
}
# Judged from the CPU tier's memory report (the PTX executor's; Triton's counted per access: see ptx.report).
TRACE_METRICS = frozenset({"sectors_per_request", "bank_conflict_ways", "lanes_per_request", "traffic_ratio"})
# Why a trace metric is unmeasured on a run without a memory report (on the CPU tier: Triton's interpreter).
NO_MEMORY_REPORT = "this run has no memory report (Triton's interpreter, the CPU tier's fallback, traces nothing)"
AT_MOST = frozenset({"sectors_per_request", "bank_conflict_ways", "traffic_ratio"})
UNITS = {
    "sectors_per_request": "sectors per request",
    "bank_conflict_ways": "-way",
    "lanes_per_request": "active lanes per request",
    "traffic_ratio": "x the compulsory bytes",
    "occupancy_percent": "%",
    "roof_percent": "% of the roof",
}


class GoalResult(BaseModel):
    """One goal as judged: what was measured, whether it meets the target, and what to do when it does not."""

    name: str
    metric: str
    target: float
    comparison: Literal["at most", "at least"]
    measured: float | None
    met: bool | None  # None: not measured on this run
    reason: str
    hint: str = ""


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def _worst_global(memory: Mapping[str, Any], access: str) -> Mapping[str, Any] | None:
    lines = [
        r
        for r in memory.get("lines") or []
        if r.get("kind") == "global" and r.get("sectors_per_request") is not None and access in ("any", r.get("access"))
    ]
    return max(lines, key=lambda r: r["sectors_per_request"], default=None)


def _worst_shared(memory: Mapping[str, Any]) -> Mapping[str, Any] | None:
    lines = [r for r in memory.get("lines") or [] if r.get("kind") == "shared"]
    return max(lines, key=lambda r: r.get("max_bank_conflict_ways") or 1, default=None)


def _largest_timed(metrics: Mapping[str, Any] | None, index: int | None = None) -> Mapping[str, Any] | None:
    """The timed size a roof goal reads: the one at `index`, else the largest."""
    sizes = [m for m in (metrics or {}).get("sizes") or [] if m.get("bandwidth_pct") is not None]
    sizes = [m for m in sizes if not m.get("above_roof") and index in (None, m.get("index", 0))]
    return max(sizes, key=lambda m: m.get("index", 0), default=None)


def _sectors(goal: GoalSpec, memory: Mapping[str, Any] | None) -> tuple[float | None, str]:
    line = _worst_global(memory or {}, goal.access) if memory else None
    if line is None:
        return None, "the simulator traced no global access of that kind"
    spr, ideal = float(line["sectors_per_request"]), float(line.get("ideal_sectors_per_request") or 0)
    what = f"`{line['expression']}`" if line.get("expression") else "an access"
    hint = (
        f"line {line['line']}: your {line['access']} of {what} touches {_number(spr)} sectors per request; "
        f"a coalesced one touches {_number(ideal)}"
    )
    stride = line.get("lane_stride_elements")
    if stride not in (None, 0, 1):
        hint += f" (neighbouring threads are {stride} elements apart)"
    return spr, hint + ": let threadIdx.x pick consecutive elements (module 2, coalescing)."


def _ways(memory: Mapping[str, Any] | None) -> tuple[float | None, str]:
    if memory is None:
        return None, "the simulator traced nothing"
    line = _worst_shared(memory)
    if line is None:
        return 1.0, "no shared-memory accesses, so no bank conflicts"
    ways = float(line.get("max_bank_conflict_ways") or 1)
    return ways, f"{str(line.get('message', '')).rstrip('.')} (module 2, transpose)."


def _lanes(goal: GoalSpec, memory: Mapping[str, Any] | None) -> tuple[float | None, str]:
    lines = [
        r
        for r in (memory or {}).get("lines") or []
        if goal.space in ("any", r.get("kind")) and goal.access in ("any", r.get("access"))
    ]
    line = min(lines, key=lambda r: r.get("threads_per_request") or 0, default=None)
    if line is None:
        return None, "the simulator traced no access of that kind"
    lanes = float(line.get("threads_per_request") or 0)
    what = f"`{line['expression']}`" if line.get("expression") else f"the {line.get('access')}"
    return lanes, (
        f"line {line['line']}: {what} ran with {_number(lanes)} of 32 lanes active per warp request: the warp's "
        "threads took different paths, and it ran each path in turn with the others switched off; make the "
        "branch's condition the same for the 32 threads of a warp (module 1, divergence)."
    )


def traffic_ratio(moved_bytes: float | None, declared_bytes: float | None) -> float | None:
    """`traffic_ratio`'s figure: bytes moved over the exercise's compulsory bytes; None without both."""
    if not moved_bytes or not declared_bytes:
        return None
    return moved_bytes / declared_bytes


def _traffic(memory: Mapping[str, Any] | None, declared_bytes: float | None) -> tuple[float | None, str]:
    totals = (memory or {}).get("totals") or {}
    moved = 32 * float(totals.get("global_sectors") or 0)
    ratio = traffic_ratio(moved, declared_bytes)
    if ratio is None or declared_bytes is None:
        return None, "no global traffic traced, or the exercise declares no bytes"
    return ratio, (
        f"your kernel asked memory for {moved:,.0f} bytes (every warp request's sectors, with no cache counted) where "
        f"the exercise needs {declared_bytes:,.0f}: read each input once and keep what is reused in registers or "
        "shared memory (module 3, the roofline)."
    )


def _occupancy(occupancy: Mapping[str, Any] | None) -> tuple[float | None, str]:
    if not occupancy or occupancy.get("occupancy") is None:
        return None, "the compiler reported no register count"
    percent = 100 * float(occupancy["occupancy"])
    limiter = str(occupancy.get("limited_by") or "")
    regs, threads = occupancy.get("registers_per_thread"), occupancy.get("threads_per_block")
    if limiter == "registers":
        hint = (
            f"occupancy is {_number(percent)}%, limited by registers ({regs} per thread): cap them with "
            f"`__launch_bounds__({threads}, blocks)` in CUDA C++ or `@cuda.jit(max_registers=...)` in Numba, "
            "or keep fewer values alive at once"
        )
    elif limiter == "shared_memory":
        hint = (
            f"occupancy is {_number(percent)}%, limited by shared memory "
            f"({occupancy.get('shared_bytes_per_block')} bytes per block): use smaller tiles or fewer arrays"
        )
    else:
        hint = f"occupancy is {_number(percent)}%, limited by {limiter.replace('_', ' ') or 'the launch'}"
    return percent, hint + "."


def _roof(goal: GoalSpec, metrics: Mapping[str, Any] | None) -> tuple[float | None, str]:
    largest = _largest_timed(metrics, goal.size)
    if largest is None:
        where = "no timed size" if goal.size is None else f"size {goal.size} was not timed"
        return None, f"{where} with the slice's measured ceilings"
    copy, fp32 = float(largest["bandwidth_pct"]), float(largest.get("flop_pct") or 0)
    memory_bound = copy >= fp32  # the attainable roof at this intensity is the lower one: see metrics.py
    percent = max(copy, fp32)
    if memory_bound:
        hint = (
            f"you are at {_number(percent)}% of the copy roof and memory-bound: move fewer bytes "
            "(fusion, reuse through shared memory) or move them better (coalesced, wide loads, enough in flight)"
        )
    else:
        hint = (
            f"you are at {_number(percent)}% of the FP32 roof and compute-bound: more independent FMAs per thread "
            "(instruction-level parallelism), fewer instructions per FLOP, or tensor cores"
        )
    return percent, hint + "."


def _measure(
    goal: GoalSpec,
    memory: Mapping[str, Any] | None,
    metrics: Mapping[str, Any] | None,
    occupancy: Mapping[str, Any] | None,
    declared_bytes: float | None,
) -> tuple[float | None, str]:
    if goal.metric in TRACE_METRICS and memory is None:
        return None, NO_MEMORY_REPORT
    if goal.metric == "sectors_per_request":
        return _sectors(goal, memory)
    if goal.metric == "bank_conflict_ways":
        return _ways(memory)
    if goal.metric == "lanes_per_request":
        return _lanes(goal, memory)
    if goal.metric == "traffic_ratio":
        return _traffic(memory, declared_bytes)
    if goal.metric == "occupancy_percent":
        return _occupancy(occupancy)
    return _roof(goal, metrics)


def shown(metric: str, value: float) -> str:
    """A figure with its unit, as the learner reads it: "4 sectors per request", "32-way", "12.5%"."""
    unit = UNITS[metric]
    text = f"{value:.2f}".rstrip("0").rstrip(".") if metric == "traffic_ratio" else _number(value)
    return f"{text}{unit}" if unit.startswith(("%", "-")) else f"{text} {unit}"


def judge(
    goals: Sequence[GoalSpec],
    backend: str,
    verdict: str,
    *,
    memory: Mapping[str, Any] | None = None,
    metrics: Mapping[str, Any] | None = None,
    occupancy: Mapping[str, Any] | None = None,
    work: WorkSpec | None = None,
    sizes: Mapping[str, int] | None = None,
) -> list[GoalResult]:
    """Each goal this backend can judge, for an accepted run; [] otherwise.

    `work` at `sizes` (the first size, the one the simulator traced) gives the compulsory bytes.
    """
    if verdict != "accepted":
        return []
    declared = number_value(work.bytes, sizes) if work is not None and sizes is not None else None
    results = []
    for goal in goals:
        if backend not in BACKENDS[goal.metric]:
            continue
        measured, hint = _measure(goal, memory, metrics, occupancy, declared)
        comparison: Literal["at most", "at least"] = "at most" if goal.metric in AT_MOST else "at least"
        met: bool | None = None
        if measured is None:
            reason = f"{goal.name}: not measured ({hint})"
        else:
            met = measured <= goal.target if comparison == "at most" else measured >= goal.target
            target = f"{comparison} {shown(goal.metric, goal.target)}"
            reason = f"{goal.name}: {shown(goal.metric, measured)}, target {target}"
        results.append(
            GoalResult(
                name=goal.name,
                metric=goal.metric,
                target=goal.target,
                comparison=comparison,
                measured=None if measured is None else round(measured, 2),
                met=met,
                reason=reason,
                hint=hint if met is False else "",
            )
        )
    return results


def all_met(results: Sequence[GoalResult]) -> bool | None:
    """True when every measured goal is met, False when one is missed, None when none was measured."""
    judged = [r.met for r in results if r.met is not None]
    return all(judged) if judged else None


def message(base: str, results: Sequence[GoalResult]) -> str:
    """The verdict's sentence with the goals in it: 'not yet fast' and the first missed goal's reason."""
    missed = [r for r in results if r.met is False]
    if missed:
        count = f"{len(missed)} of {sum(r.met is not None for r in results)} goals missed"
        return f"{base}; correct, not yet fast ({count}): {missed[0].reason}"
    if all_met(results):
        return f"{base}; every goal met"
    return base


def result_fields(results: Sequence[GoalResult]) -> dict[str, Any]:
    """What the Result and the `done` event carry: the goals and whether all were met (absent without goals)."""
    if not results:
        return {}
    return {"goals": [r.model_dump() for r in results], "goals_met": all_met(results)}
