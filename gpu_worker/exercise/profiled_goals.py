"""An exercise's memory-access goals judged on a GPU from Nsight Compute's counters (`check-labs --ncu-goals`).

On the CPU tier `goals` judges sectors per request, bank-conflict ways and traffic from the PTX executor's
memory report, line by line; a GPU run traces no address, so the cuda backend leaves those goals unjudged. Nsight
Compute counts them for the whole kernel instead, and `gpu_worker.measurement.ncu.summarize` turns its
counters into facts; here those facts become the goals' figures:

- `sectors_per_request`: the global loads' sectors per request, the stores', or (access `any`) the worse of
  the two. These are kernel-wide averages where the CPU tier reads its worst line, so a kernel with one
  scattered access among many coalesced ones reads better here than there.
- `bank_conflict_ways`: the worse of the shared loads' and stores' ways (wavefronts per warp instruction,
  as NVIDIA's own bank-conflict rule computes them); 1 for a kernel that counted no shared access.
- `traffic_ratio`: the global loads' and stores' sectors (L1 requests, `l1tex__t_sectors_pipe_lsu_mem_global_*`)
  times 32 bytes, over the exercise's compulsory bytes (lab.yaml's `bytes` formula) at the profiled size. That
  is the CPU tier's quantity, every warp request's sectors with no cache counted, and not ncu's DRAM bytes:
  DRAM sees only what the L1 and L2 miss (a pointer chase in global memory, or a matmul's re-read tiles, move
  the data once however often it is asked for) and fetches 64 bytes where a request needs 32 (the stride_32
  log: 8.5x the compulsory bytes from DRAM, 4.5x asked for; the tiled transpose's 0.85x, its writes still in
  the L2, against 1.0x). The size differs from the CPU tier's, so a goal whose ratio grows with the size (a
  tiled matmul re-reads its inputs n / tile times) reads a larger figure here than its target was written for.
- `lanes_per_request`: the CPU tier's worst site, from a second ncu run of its own (`profiling.profile_lanes`,
  the SourceCounters section, read from the report's SASS source page by `gpu_worker.measurement.ncu_source`):
  per memory instruction that ran, its predicated-on thread executions over its warp executions, and the
  fewest of those among the instructions of the goal's access (atomics only for `any`, as on the CPU tier)
  and space (global counts the generic LD/ST/ATOM too). No kernel-wide counter does it: Nsight Compute
  2025.3.1 on gh100 counts SASS threads by instruction class, not by memory space (run 28, call 4). SASS is
  not the CPU tier's PTX, so the two can read different sites (see `ncu_source`). A figure within
  `LANES_TOLERANCE` under its target meets it: a site that a partial last warp also ran averages a fraction
  of a lane short of 32.

A figure within `TOLERANCE` of its target meets it: ncu counts a few wavefronts the executor does not (1.03
ways on a padded, conflict-free 32x33 tile, H200, 2026-12-02), and
tests/gpu_worker/ptx/test_the_memory_report_agrees_with_nsight_compute.py holds the two to 10% of each other.

This is a report beside the verdict, never part of it: no learner's run is judged here. Facts without
counters (ncu missing, refused, failed) give each goal `met: None` and the reason in words; so does a source
page that did not come (its run failed, or lacked a column), for the lanes goal alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from gpu_worker.exercise.goals import GoalResult, shown, traffic_ratio
from gpu_worker.protocol import GoalSpec

#: The goals' metrics Nsight Compute measures on a GPU (`lanes_per_request` from its own run: see above).
PROFILED_METRICS = frozenset({"sectors_per_request", "bank_conflict_ways", "traffic_ratio", "lanes_per_request"})
TOLERANCE = 0.10  # a figure this far above an "at most" target still meets it (see the docstring)
LANES_TOLERANCE = 0.01  # a lanes figure this far under its "at least" target still meets it (see the docstring)
ACCESSES = ("load", "store")


def profiled(goals: Sequence[GoalSpec]) -> list[GoalSpec]:
    """The goals Nsight Compute can judge: those of `PROFILED_METRICS`, in the exercise's order."""
    return [g for g in goals if g.metric in PROFILED_METRICS]


def _number(value: float) -> str:
    return f"{value:g}"


def _worse(figures: dict[str, float | None]) -> tuple[float | None, str]:
    """The largest known figure and each known one in words ("loads 4, stores 4")."""
    known = {access: value for access, value in figures.items() if value is not None}
    if not known:
        return None, ""
    return max(known.values()), ", ".join(f"{access}s {_number(value)}" for access, value in known.items())


def figure(goal: GoalSpec, facts: Mapping[str, Any]) -> tuple[float | None, str]:
    """The goal's figure from `ncu.summarize`'s facts, and what it is made of in words (why not, when None)."""
    if goal.metric == "sectors_per_request":
        accesses = [a for a in ACCESSES if goal.access in ("any", a)]
        value, detail = _worse({a: facts.get(f"global_{a}_sectors_per_request") for a in accesses})
        if value is None:
            return None, f"Nsight Compute counted no global {' or '.join(accesses)} request"
        return value, f"global {detail}"
    if goal.metric == "bank_conflict_ways":
        value, detail = _worse({a: facts.get(f"shared_{a}_ways") for a in ACCESSES})
        if value is not None:
            return value, f"shared {detail}"
        raw = facts.get("raw") or {}
        instructions = [raw.get(f"smsp__sass_inst_executed_op_shared_{op}.sum") for op in ("ld", "st")]
        if instructions and all(count == 0 for count in instructions):
            return 1.0, "no shared-memory access, so no bank conflicts"
        return None, "Nsight Compute reported no shared-memory counters"
    if goal.metric == "traffic_ratio":
        return _traffic(facts)
    if goal.metric == "lanes_per_request":
        return _lanes(goal, facts.get("lanes"))
    return None, f"Nsight Compute does not measure {goal.metric}"


def _traffic(facts: Mapping[str, Any]) -> tuple[float | None, str]:
    requested, declared = facts.get("global_requested_bytes"), facts.get("declared_bytes")
    value = traffic_ratio(requested, declared)
    if value is None or requested is None or declared is None:
        return None, "Nsight Compute counted no global sector, or the exercise declares no bytes at this size"
    return value, f"global requests {requested:,.0f} bytes, compulsory {declared:,.0f}"


def _spaces(goal: GoalSpec) -> tuple[str, ...]:
    """The sites' spaces (`ncu_source.OPCODES`) a goal's `space` reads: a generic access counts as global."""
    return {"global": ("global", "generic"), "shared": ("shared",)}.get(goal.space, ("global", "generic", "shared"))


def _lanes(goal: GoalSpec, lanes: Mapping[str, Any] | None) -> tuple[float | None, str]:
    if not lanes:
        return None, "no source-counter profile was taken"
    if not lanes.get("available"):
        return None, str(lanes.get("reason") or "Nsight Compute gave no reason")
    sites = [
        s
        for s in lanes.get("sites") or []
        if s.get("space") in _spaces(goal) and goal.access in ("any", s.get("access")) and s.get("lanes") is not None
    ]
    worst = min(sites, key=lambda s: float(s["lanes"]), default=None)
    if worst is None:
        what = "memory" if goal.space == "any" else goal.space
        return None, f"Nsight Compute's source counters show no {what} {goal.access} instruction that ran"
    where = f"{worst['access']} `{worst['sass']}`" + (f" at {worst['address']}" if worst.get("address") else "")
    return float(worst["lanes"]), f"fewest of {len(sites)} SASS sites: {where}"


def _comparison(goal: GoalSpec) -> Literal["at most", "at least"]:
    return "at least" if goal.metric == "lanes_per_request" else "at most"


def _met(goal: GoalSpec, measured: float) -> bool:
    if _comparison(goal) == "at least":
        return measured >= goal.target * (1 - LANES_TOLERANCE)
    return measured <= goal.target * (1 + TOLERANCE)


def _unmeasured(goal: GoalSpec, why: str) -> GoalResult:
    return GoalResult(
        name=goal.name,
        metric=goal.metric,
        target=goal.target,
        comparison=_comparison(goal),
        measured=None,
        met=None,
        reason=f"{goal.name}: not measured ({why})",
    )


def _judged(goal: GoalSpec, facts: Mapping[str, Any]) -> GoalResult:
    measured, detail = figure(goal, facts)
    if measured is None:
        return _unmeasured(goal, detail)
    target = f"{_comparison(goal)} {shown(goal.metric, goal.target)}"
    said = f"{shown(goal.metric, measured)} ({detail}), target {target}"
    return _unmeasured(goal, detail).model_copy(
        update={"measured": round(measured, 2), "met": _met(goal, measured), "reason": f"{goal.name}: {said}"}
    )


def not_measured(goals: Sequence[GoalSpec], reason: str, **fields: Any) -> dict[str, Any]:
    """A case's record when no counters were taken: every goal unmeasured, and why in a sentence."""
    return {**fields, "available": False, "reason": reason, "goals": [_fields(_unmeasured(g, reason)) for g in goals]}


def _fields(result: GoalResult) -> dict[str, Any]:
    return result.model_dump(exclude={"hint"})


def record(goals: Sequence[GoalSpec], facts: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a case's JSON carries (`ncu_goals`): the source, the size, each goal's figure and whether it met its target.

    `facts` is `gpu_worker.profiling`'s profile (None where none was taken); a profile that could not be taken
    gives its reason (and ncu's own words in `detail`) with every goal unmeasured.
    """
    if facts is None:
        return not_measured(goals, "no profile was taken: WARPLAB_PROFILE=0 turns it off, and only cuda profiles")
    where = {k: facts[k] for k in ("source", "index", "sizes") if facts.get(k) is not None}
    if not facts.get("available"):
        reason = str(facts.get("reason") or "Nsight Compute gave no reason")
        detail = {"detail": facts["detail"]} if facts.get("detail") else {}
        return not_measured(goals, reason, **where, **detail)
    results = [_judged(g, facts) for g in goals]
    record = {**where, "available": True, "tolerance": TOLERANCE, "goals": [_fields(r) for r in results]}
    lanes = facts.get("lanes") or {}
    if any(g.metric == "lanes_per_request" for g in goals):
        record["lanes_tolerance"] = LANES_TOLERANCE
        if lanes.get("detail"):
            record["lanes_detail"] = lanes["detail"]  # ncu's own words where the source page did not come
    return record
