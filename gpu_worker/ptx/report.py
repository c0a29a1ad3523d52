"""Sectors per request and bank-conflict ways, counted from the addresses each warp's loads and stores touched.

The executor calls `MemoryTrace.record` once per executed global or shared-memory instruction with the
group of threads that ran it; each warp in the group is one request, valued as the hardware would:
global requests by the distinct 32-byte sectors they touch (ideal: the distinct bytes over 32),
shared requests by the most distinct 4-byte words asked of one of the 32 banks (in phases of 16 or 8
lanes for 8- and 16-byte accesses). Counting is vectorised per instruction, so tracing costs a few
NumPy calls per memory instruction, not a Python call per thread. Sites are the learner's source lines
(from `.loc`): the unrolled copies of one line's load are one site.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from gpu_worker.science.memtrace_report import (
    BANK_BYTES,
    BANKS,
    SECTOR_BYTES,
    WARP_SIZE,
    Hazard,
    MemoryReport,
    Site,
    SiteTotals,
    Space,
    report_from_totals,
)

MODEL = (
    "PTX executor: sectors of 32 bytes, each buffer aligned to 256 bytes; 32 shared-memory banks of 4 bytes "
    "at the offsets the compiler gave the shared arrays"
)
SiteKey = tuple[int, str, str, int]  # (line, access, space kind, buffer or shared array number)


class Hazards:
    """Races and uninitialised shared-memory reads, counted per source line."""

    def __init__(self) -> None:
        self.lanes: dict[tuple[int | None, str], int] = defaultdict(int)

    def count(self, line: int | None, kind: str, lanes: int) -> None:
        if lanes:
            self.lanes[(line, kind)] += lanes

    def found(self) -> list[Hazard]:
        return [
            Hazard(line=line, kind=kind, lanes=lanes, message=_hazard_message(line, kind, lanes))  # type: ignore[arg-type]
            for (line, kind), lanes in sorted(self.lanes.items(), key=lambda item: (item[0][0] or 0, item[0][1]))
        ]


def _hazard_message(line: int | None, kind: str, lanes: int) -> str:
    where = f"line {line}: " if line else ""
    if kind == "race":
        return (
            f"{where}a shared-memory race: {lanes} accesses touched a word that another warp wrote or read since "
            "the last barrier; put a __syncthreads() (cuda.syncthreads()) between the write and the read"
        )
    return f"{where}{lanes} shared-memory reads of words no thread had written (a GPU would read garbage there)"


class MemoryTrace:
    """The per-site totals of one launch's global and shared-memory requests, and its hazards.

    With `per_access`, a site's global instructions run back to back are valued as one access of the
    source: each warp's sectors are the distinct ones all of them touched, over as many requests as they
    made. Triton's compiler splits one `tl.load` into several word loads per thread (its blocked layout
    gives a thread neighbouring elements; where alignment is unproven it loads them a word at a time), and
    the later loads hit the sectors the first fetched: per instruction, a coalesced `tl.load` would read
    as 16 sectors per request. CUDA C++ and Numba keep one request per instruction: their thread's
    neighbouring elements are the learner's choice (vector-add's `contiguous-chunks` sample).
    """

    MAX_PENDING = 1 << 20  # addresses held for one access at most; past it the access is valued in parts

    def __init__(self, *, per_access: bool = False) -> None:
        self.hazards = Hazards()
        self.sites: dict[SiteKey, Site] = {}
        self.totals: dict[SiteKey, SiteTotals] = defaultdict(SiteTotals)
        self.accesses = 0
        self.per_access = per_access
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # one access's instructions so far
        self._pending_key: tuple[SiteKey, int] | None = None

    def record(
        self,
        key: SiteKey,
        space: Space,
        warps: np.ndarray,
        lanes: np.ndarray,
        addresses: np.ndarray,
        size: int,
    ) -> None:
        """One instruction run by a group of threads: their warps (unique per launch), lanes and byte addresses."""
        if len(warps) == 0:
            return
        if key not in self.sites:
            line, access, _kind, _number = key
            self.sites[key] = Site(line, None, None, access, space)  # type: ignore[arg-type]
        warps = warps.astype(np.int64, copy=False)
        addresses = addresses.astype(np.int64, copy=False)
        self.accesses += len(warps)
        if not (self.per_access and space.kind == "global"):
            self._flush()
            requests, per_warp, ideal = (
                _sectors(warps, addresses, size) if space.kind == "global" else _ways(warps, lanes, addresses, size)
            )
            self._add(key, space, (warps, lanes, addresses), len(warps), requests, per_warp, ideal, per_warp)
            return
        if self._pending_key != (key, size) or sum(len(w) for w, _, _ in self._pending) > self.MAX_PENDING:
            self._flush()
            self._pending_key = (key, size)
        self._pending.append((warps, lanes, addresses))

    def _flush(self) -> None:
        """Values the access held by `per_access`: each warp's distinct sectors over its requests."""
        if self._pending_key is None:
            return
        (key, size), parts = self._pending_key, self._pending
        self._pending_key, self._pending = None, []
        warps = np.concatenate([w for w, _, _ in parts])
        _, union, ideal = _sectors(warps, np.concatenate([a for _, _, a in parts]), size)
        _, made = np.unique(np.concatenate([np.unique(w) for w, _, _ in parts]), return_counts=True)
        worst = -(-union // made)  # each warp's sectors per request, rounded up
        self._add(key, self.sites[key].space, parts[0], len(warps), int(made.sum()), union, ideal, worst)

    def _add(
        self,
        key: SiteKey,
        space: Space,
        first: tuple[np.ndarray, np.ndarray, np.ndarray],
        lanes_run: int,
        requests: int,
        cost: np.ndarray,
        ideal: int,
        worst: np.ndarray,
    ) -> None:
        """Adds valued requests to the site; `first` (warps, lanes, addresses: one instruction's) gives the stride."""
        totals = self.totals[key]
        totals.requests += requests
        totals.lanes += lanes_run
        totals.cost += int(cost.sum())
        totals.ideal += ideal
        totals.worst = max(totals.worst, int(worst.max()))
        warps, lanes, addresses = first
        if len(warps) > 1 and warps[0] == warps[1] and lanes[1] == lanes[0] + 1:
            totals.strides[int(addresses[1] - addresses[0]) // space.itemsize] += 1

    def report(self, grid: Sequence[int], block: Sequence[int], threads: int) -> MemoryReport:
        self._flush()
        totals: dict[object, SiteTotals] = dict(self.totals.items())
        sites: dict[object, Site] = dict(self.sites.items())
        found = report_from_totals(
            totals, sites, grid=grid, block=block, launches=1, threads=threads,
            accesses=self.accesses,
        )  # fmt: skip
        found.model = MODEL
        found.hazards = self.hazards.found()
        if found.hazards:
            found.summary = " ".join([h.message + "." for h in found.hazards[:2]] + [found.summary])
        return found


def _sectors(warps: np.ndarray, addresses: np.ndarray, size: int) -> tuple[int, np.ndarray, int]:
    """(requests, sectors of each request, ideal sectors summed) for one global instruction."""
    low = (1 << 44) - 1
    first, last = addresses >> 5, (addresses + size - 1) >> 5
    keys = (warps << 44) | (first & low)
    if (last != first).any():  # an access across a sector boundary touches both
        keys = np.concatenate([keys, (warps << 44) | (last & low)])
    touched = np.unique(keys)
    request_ids, per_warp = np.unique(touched >> 44, return_counts=True)
    distinct = np.unique((warps << 48) | (addresses & ((1 << 48) - 1)))
    _, bytes_per_warp = np.unique(distinct >> 48, return_counts=True)
    ideal = np.maximum(1, -(-(bytes_per_warp * size) // SECTOR_BYTES))
    return len(request_ids), per_warp, int(ideal.sum())


def _ways(warps: np.ndarray, lanes: np.ndarray, addresses: np.ndarray, size: int) -> tuple[int, np.ndarray, int]:
    """(requests, ways of each request, requests) for one shared-memory instruction."""
    words_per_thread = max(1, size // BANK_BYTES)
    phase = lanes.astype(np.int64) // max(1, WARP_SIZE // words_per_thread)
    words = np.concatenate([(addresses >> 2) + k for k in range(words_per_thread)])
    warps_k = np.tile(warps, words_per_thread)
    phase_k = np.tile(phase, words_per_thread)
    request = (warps_k << 2) | phase_k
    distinct = np.unique((request << 32) | (words & 0xFFFFFFFF))
    banks = ((distinct >> 32) << 5) | ((distinct & 0xFFFFFFFF) % BANKS)
    bank_keys, per_bank = np.unique(banks, return_counts=True)
    phases, start = np.unique(bank_keys >> 5, return_index=True)
    per_phase = np.maximum.reduceat(per_bank, start)
    request_ids, start = np.unique(phases >> 2, return_index=True)
    per_warp = np.maximum.reduceat(per_phase, start)
    return len(request_ids), per_warp, len(request_ids)
