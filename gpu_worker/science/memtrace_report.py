"""Turn traced memory accesses into a per-line report in plain words: sectors per request and bank conflicts.

`gpu_worker.science.memtrace` records every global and shared-memory access of a
simulated launch; this module groups them into warp requests and values each
one the way the hardware would:

- global memory moves 32-byte sectors: a request costs the number of distinct
  sectors its 32 threads touch, and the ideal is the fewest sectors that could
  hold the distinct bytes they asked for (4 for 32 consecutive 4-byte floats);
- shared memory has 32 banks of 4-byte words: a request costs as many passes
  (ways) as the largest number of distinct words it asks of one bank; threads
  reading the same word are served by broadcast, which is no conflict.
  Accesses of 8 or 16 bytes are served in 2 or 4 phases of 16 or 8 threads,
  as the hardware does, and the ways are counted per phase.

It needs no Numba, so the web side can read and validate a report too.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4
WARP_SIZE = 32
COALESCED_SLACK = 1.5  # a load may touch this many times the ideal sectors before we call it uncoalesced


class LineReport(BaseModel):
    """One load, store or atomic site of the learner's file, summed over every warp that ran it."""

    line: int
    column: int | None = None
    expression: str | None = None  # the subscript as written, e.g. "a[i * 32]"
    kind: Literal["global", "shared"]
    access: Literal["load", "store", "atomic"]
    itemsize: int
    requests: int  # warp-level instruction instances
    threads_per_request: float
    sectors_per_request: float | None = None  # global only
    ideal_sectors_per_request: float | None = None
    max_sectors_per_request: int | None = None
    efficiency: float | None = None  # ideal / actual sectors, 1.0 when coalesced
    bank_conflict_ways: float | None = None  # shared only: average ways, 1.0 without conflicts
    max_bank_conflict_ways: int | None = None
    lane_stride_elements: int | None = None  # the usual distance between neighbouring threads' elements
    severity: Literal["ok", "warning"] = "ok"
    message: str


class MemoryTotals(BaseModel):
    global_requests: int = 0
    global_sectors: int = 0
    global_ideal_sectors: int = 0
    global_sectors_per_request: float | None = None
    global_efficiency: float | None = None
    shared_requests: int = 0
    shared_wavefronts: int = 0  # sum of ways over shared requests
    shared_bank_conflict_ways: float | None = None  # wavefronts / requests
    bank_conflicts: int = 0  # extra passes: wavefronts - requests


class Hazard(BaseModel):
    """A shared-memory hazard seen on one line: a race between warps with no barrier, or an uninitialised read."""

    line: int | None = None
    kind: Literal["race", "uninitialised"]
    lanes: int  # thread-level accesses that met it
    message: str


class MemoryReport(BaseModel):
    """What the memory trace of one simulated launch found, per site and in total."""

    backend: Literal["sim"] = "sim"
    grid: list[int] = Field(default_factory=list)
    block: list[int] = Field(default_factory=list)
    launches: int = 0
    threads: int = 0
    accesses: int = 0  # thread-level accesses traced
    truncated: bool = False  # the trace stopped at its cap; later accesses are not counted
    lines: list[LineReport] = Field(default_factory=list)
    totals: MemoryTotals = Field(default_factory=MemoryTotals)
    hazards: list[Hazard] = Field(default_factory=list)  # the PTX executor's warnings; none from the simulator
    summary: str = ""
    model: str = (
        "sectors of 32 bytes, allocations aligned to 256 bytes; 32 shared-memory banks of 4 bytes, "
        "each shared array starting at bank 0"
    )


Access = Literal["load", "store", "atomic"]


@dataclass(frozen=True, eq=False)
class Space:
    """One array the trace saw: a global allocation or a shared-memory array (compared by identity)."""

    kind: Literal["global", "shared"]
    shape: tuple[int, ...]
    itemsize: int


@dataclass(frozen=True)
class Site:
    """One load, store or atomic instruction on one array, located in the learner's file."""

    line: int
    column: int | None
    expression: str | None
    access: Access
    space: Space


# A traced access: (site key, launch, block, warp, k-th execution by this thread, lane, byte address, size).
TracedAccess = tuple[object, int, tuple[int, int, int], int, int, int, int, int]


@dataclass
class SiteTotals:
    """One site's warp requests, summed: what its line of the report is made from."""

    requests: int = 0
    lanes: int = 0
    cost: int = 0  # sectors (global) or ways (shared)
    ideal: int = 0
    worst: int = 0
    strides: Counter[int] = field(default_factory=Counter)


def _sectors(accesses: Sequence[tuple[int, int, int]]) -> tuple[int, int]:
    """Distinct sectors touched and the fewest that could hold the distinct bytes asked for."""
    sectors: set[int] = set()
    sizes: dict[int, int] = {}
    for _lane, addr, size in accesses:
        first, last = addr >> 5, (addr + size - 1) >> 5
        sectors.add(first)
        if last != first:
            sectors.update(range(first + 1, last + 1))
        sizes[addr] = size
    return len(sectors), max(1, math.ceil(sum(sizes.values()) / SECTOR_BYTES))


def _ways(accesses: Sequence[tuple[int, int, int]]) -> int:
    """The passes a shared-memory request needs: the most distinct words asked of one bank in one phase."""
    words_per_thread = max(1, max(size for _, _, size in accesses) // BANK_BYTES)
    lanes_per_phase = max(1, WARP_SIZE // words_per_thread)
    banks: dict[tuple[int, int], set[int]] = defaultdict(set)
    for lane, addr, size in accesses:
        phase = lane // lanes_per_phase
        for word in range(addr >> 2, ((addr + size - 1) >> 2) + 1):
            banks[(phase, word % BANKS)].add(word)
    return max(len(words) for words in banks.values())


def _lane_strides(accesses: Sequence[tuple[int, int, int]], itemsize: int, into: Counter[int]) -> None:
    by_lane = {lane: addr for lane, addr, _ in accesses}
    for lane, addr in by_lane.items():
        after = by_lane.get(lane + 1)
        if after is not None:
            into[(after - addr) // itemsize] += 1
            return  # one sample per request keeps this cheap


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def _global_message(site: Site, spr: float, ideal: float, stride: int | None) -> tuple[str, Literal["ok", "warning"]]:
    verb = site.access
    what = f" of `{site.expression}`" if site.expression else ""
    actual, best = _number(spr), _number(ideal)
    if spr <= ideal * COALESCED_SLACK or spr - ideal < 1:
        sectors = "1 sector" if actual == "1" else f"{actual} sectors"
        return f"line {site.line}: the {verb}{what} is coalesced: {sectors} per warp (ideal {best}).", "ok"
    text = f"line {site.line}: each warp's {verb}{what} touches {actual} sectors; a coalesced {verb} touches {best}"
    if stride not in (None, 0, 1):
        text += f" (neighbouring threads are {stride} elements apart: let threadIdx.x pick consecutive elements)"
    return text + ".", "warning"


def _shared_message(site: Site, ways: float, worst: int, stride: int | None) -> tuple[str, Literal["ok", "warning"]]:
    verb = site.access
    what = f" `{site.expression}`" if site.expression else ""
    if worst <= 1:
        return f"line {site.line}: shared-memory {verb}{what} has no bank conflicts.", "ok"
    text = f"line {site.line}: shared-memory {verb}{what} with {worst}-way bank conflicts"
    if ways < worst - 0.05:
        text += f" ({_number(ways)} on average)"
    shape, itemsize = site.space.shape, site.space.itemsize
    row_words = shape[-1] * itemsize // BANK_BYTES if len(shape) >= 2 else 0
    if row_words and row_words % BANKS == 0 and stride is not None and abs(stride) == shape[-1]:
        text += f": pad the row ([N][N+1], here [{shape[-2]}][{shape[-1] + 1}])"
    elif stride not in (None, 0, 1):
        text += f": neighbouring threads are {stride} elements apart; give them consecutive words"
    return text + ".", "warning"


def _summary(lines: list[LineReport], totals: MemoryTotals) -> str:
    if not lines:
        return "The kernel made no global or shared-memory accesses from your file."
    worst_global = max(
        (r for r in lines if r.kind == "global" and r.severity == "warning"),
        key=lambda r: (r.sectors_per_request or 0) / (r.ideal_sectors_per_request or 1),
        default=None,
    )
    worst_shared = max(
        (r for r in lines if r.kind == "shared" and r.severity == "warning"),
        key=lambda r: r.max_bank_conflict_ways or 0,
        default=None,
    )
    parts = [r.message for r in (worst_global, worst_shared) if r is not None]
    if parts:
        return " ".join(parts)
    text = f"All {totals.global_requests} global requests are coalesced"
    if totals.shared_requests:
        text += f" and the {totals.shared_requests} shared-memory requests have no bank conflicts"
    return text + "."


def build_report(
    accesses: Iterable[TracedAccess],
    sites: dict[object, Site],
    *,
    grid: Sequence[int] = (),
    block: Sequence[int] = (),
    launches: int = 0,
    threads: int = 0,
    truncated: bool = False,
) -> MemoryReport:
    """Group traced accesses into warp requests (launch, block, warp, site, k-th execution) and value them."""
    requests: dict[tuple[object, int, tuple[int, int, int], int, int], list[tuple[int, int, int]]] = defaultdict(list)
    count = 0
    for key, launch, blk, warp, k, lane, addr, size in accesses:
        requests[(key, launch, blk, warp, k)].append((lane, addr, size))
        count += 1
    per_site: dict[object, SiteTotals] = defaultdict(SiteTotals)
    for (key, *_), group in requests.items():
        site, acc = sites[key], per_site[key]
        acc.requests += 1
        acc.lanes += len({lane for lane, _, _ in group})
        if site.space.kind == "global":
            cost, ideal = _sectors(group)
        else:
            cost, ideal = _ways(group), 1
        acc.cost += cost
        acc.ideal += ideal
        acc.worst = max(acc.worst, cost)
        _lane_strides(group, site.space.itemsize, acc.strides)
    return report_from_totals(
        per_site, sites, grid=grid, block=block, launches=launches, threads=threads, accesses=count, truncated=truncated
    )


def report_from_totals(
    per_site: dict[object, SiteTotals],
    sites: dict[object, Site],
    *,
    grid: Sequence[int] = (),
    block: Sequence[int] = (),
    launches: int = 0,
    threads: int = 0,
    accesses: int = 0,
    truncated: bool = False,
) -> MemoryReport:
    """The report of sites whose requests were already valued (by this module, or by the PTX executor)."""
    totals = MemoryTotals()
    lines = []
    for key, acc in per_site.items():
        site = sites[key]
        stride = acc.strides.most_common(1)[0][0] if acc.strides else None
        row: dict[str, Any] = dict(
            line=site.line,
            column=site.column,
            expression=site.expression,
            kind=site.space.kind,
            access=site.access,
            itemsize=site.space.itemsize,
            requests=acc.requests,
            threads_per_request=round(acc.lanes / acc.requests, 2),
            lane_stride_elements=stride,
        )
        if site.space.kind == "global":
            spr, mean_ideal = acc.cost / acc.requests, acc.ideal / acc.requests
            message, severity = _global_message(site, spr, mean_ideal, stride)
            row.update(
                sectors_per_request=round(spr, 2),
                ideal_sectors_per_request=round(mean_ideal, 2),
                max_sectors_per_request=acc.worst,
                efficiency=round(acc.ideal / acc.cost, 3),
            )
            totals.global_requests += acc.requests
            totals.global_sectors += acc.cost
            totals.global_ideal_sectors += acc.ideal
        else:
            ways = acc.cost / acc.requests
            message, severity = _shared_message(site, ways, acc.worst, stride)
            row.update(bank_conflict_ways=round(ways, 2), max_bank_conflict_ways=acc.worst)
            totals.shared_requests += acc.requests
            totals.shared_wavefronts += acc.cost
        lines.append(LineReport(**row, message=message, severity=severity))
    lines.sort(key=lambda r: (r.line, r.column or 0, r.access))

    if totals.global_requests:
        totals.global_sectors_per_request = round(totals.global_sectors / totals.global_requests, 2)
        totals.global_efficiency = round(totals.global_ideal_sectors / totals.global_sectors, 3)
    if totals.shared_requests:
        totals.shared_bank_conflict_ways = round(totals.shared_wavefronts / totals.shared_requests, 2)
        totals.bank_conflicts = totals.shared_wavefronts - totals.shared_requests
    return MemoryReport(
        grid=list(grid),
        block=list(block),
        launches=launches,
        threads=threads,
        accesses=accesses,
        truncated=truncated,
        lines=lines,
        totals=totals,
        summary=_summary(lines, totals),
    )
