"""Engine side of GPU measurements: turn the child's `timing` and `occupancy` messages into events and results.

The child (cuda backend) times each size right after launching it, before the
engine has judged its outputs; this module, in the engine, keeps those numbers
only for sizes whose checks passed, adds the metrics (the exercise's declared
bytes and FLOPs over the median, as % of this slice's calibrated ceilings, with
the above-the-roof flag), and emits `timing`, `occupancy` and `metrics` events.
Nothing here touches the GPU: ceilings come from the calibration cache.

Whether the GPU was shared is also judged here, not in the child: the sandbox's
PID namespace hides other processes from the child's NVML. Before (`occupancy`
arrives) and after (`timing` arrives) each size's measurement, NVML's list of
compute processes is read from the engine's side; any process that is not this
worker or one of its sandboxes flags that size's metrics as indicative. A worker
whose slice is planned as shared (WARPLAB_SLICE_KIND mps or timeslice) flags every
size so: "shared GPU: indicative", whoever else was seen.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from gpu_worker.measurement.device_info import Nvml, descends_from
from gpu_worker.protocol import CheckInfo, Job
from gpu_worker.science.metrics import Ceilings, work_metrics
from gpu_worker.science.occupancy import resident_warps

MESSAGE_TYPES = frozenset({"timing", "occupancy"})
SHARED_SLICE_KINDS = ("mps", "timeslice")
MAX_HOLD_SECONDS = 60.0  # one size's timed launches never hold the lock longer (the budget is 0.35 s of GPU time)


def shared_slice() -> bool:
    """Whether this worker's slice shares its GPU by plan (MPS or time-slicing)."""
    from gpu_worker.settings import WorkerSettings

    try:
        return WorkerSettings().slice_kind in SHARED_SLICE_KINDS
    except Exception:  # settings that do not parse are the service's to report, not a timing's
        return False


def load_ceilings() -> Ceilings | None:
    """This worker's calibrated ceilings, or None when it was never calibrated (metrics then say so)."""
    try:
        from gpu_worker.measurement import calibrate

        return calibrate.metrics_ceilings(calibrate.find_cached())
    except Exception:  # no NVML, no cache, a stale file: metrics without percentages
        return None


class GpuReport:
    """Collects per-size timing, occupancy and metrics for one job."""

    def __init__(
        self,
        job: Job,
        runs: list[dict[str, Any]],
        send: Callable[..., None],
        checks: list[CheckInfo],
        ceilings: Ceilings | None = None,
    ):
        self.job, self.runs, self.send, self.checks = job, runs, send, checks
        self.ceilings = ceilings
        self.timings: dict[int, dict[str, Any]] = {}
        self.occupancies: dict[int, dict[str, Any]] = {}
        self.metrics: dict[int, dict[str, Any]] = {}
        # the learner's block-size sweep (`exercise.plan.sweep_runs`), kept apart from the exercise's sizes
        self.sweep_checks: dict[int, list[CheckInfo]] = {}
        self.sweep_occupancies: dict[int, dict[str, Any]] = {}
        self.sweep_metrics: dict[int, dict[str, Any]] = {}
        self.nvml: Nvml | None = None
        self.others: dict[int, dict[int, int]] = {}  # size index -> {pid: MiB} of processes not ours
        self.shared_slice = shared_slice()
        self.lock_held_seconds = 0.0  # the timing lock's hold over every size and sweep point (`gpu_busy`)

    def _sample_others(self, index: int) -> None:
        """Note the compute processes on this GPU that are neither this worker nor its sandboxes."""
        if self.nvml is None:
            from gpu_worker.measurement.gpu_lock import worker_gpu_uuid

            self.nvml = Nvml(uuid=worker_gpu_uuid())
        me = os.getpid()
        found = self.others.setdefault(index, {})
        for p in self.nvml.state().other_processes:
            if not descends_from(p["pid"], me):
                found[p["pid"]] = p["used_mib"]

    def _passed(self, index: int) -> bool:
        if "sweep_block" in self.runs[index]:
            mine = self.sweep_checks.get(index) or []
        else:
            sizes = self.runs[index]["sizes"]
            mine = [c for c in self.checks if c.sizes == sizes]
        return bool(mine) and all(c.passed for c in mine)

    def handle(self, message: dict[str, Any]) -> bool:
        """Take a `timing` or `occupancy` message; False for any other type."""
        kind = message.get("type")
        if kind not in MESSAGE_TYPES:
            return False
        index = int(message["index"])
        if not 0 <= index < len(self.runs):
            raise ValueError(f"{kind} for an unknown size {index}")
        sizes = self.runs[index]["sizes"]
        if kind == "timing":  # the measuring process's own clock around its hold; never more than a budget's worth
            held = float(dict(message["timing"]).get("lock_held_seconds") or 0.0)
            self.lock_held_seconds += min(max(held, 0.0), MAX_HOLD_SECONDS)
        self._sample_others(index)
        if "sweep_block" in self.runs[index]:
            return self._sweep_point(index, kind, message)
        if kind == "occupancy":
            occ = dict(message["occupancy"])
            self.occupancies[index] = occ
            self.send("occupancy", index=index, sizes=sizes, **occ)
            return True
        t = dict(message["timing"])
        if not self._passed(index):
            t["counted"] = False
            t["note"] = "not counted: this size's output was wrong"
            self.timings[index] = t
            return True
        t["counted"] = True
        t["ranked"] = True  # a leaderboard may rank it (grades add their own rules: exclusive slices only)
        if "outputs_varied" in (t.get("flags") or []):
            t["ranked"] = False
            t["note"] = "not ranked: some timed launches left other outputs than the others (fingerprints differ)"
        others = self.others.get(index) or {}
        if others or self.shared_slice:
            t["flags"] = sorted({*(t.get("flags") or []), "shared_gpu"})
            t["other_processes"] = [{"pid": pid, "used_mib": mib} for pid, mib in sorted(others.items())]
        self.timings[index] = t
        self.send("timing", index=index, sizes=sizes, **t)
        median_ms = t.get("median_ms")
        m = work_metrics(
            self.job.exercise.harness.work, sizes, median_ms / 1000.0 if median_ms else None, self.ceilings
        ).model_dump()
        hot = t.get("hot_median_ms")
        if hot:
            m["hot_bandwidth"] = m["bytes"] / (hot / 1000.0)
        if self.ceilings is not None:
            m["ceilings_source"] = self.ceilings.source
        m["shared_gpu"] = "shared_gpu" in (t.get("flags") or [])
        if self.shared_slice:
            m["verdict"] += " Shared GPU: indicative (this slice shares its GPU by MPS or time-slicing)."
        elif m["shared_gpu"]:
            m["verdict"] += " Another process used this GPU during the measurement: indicative only."
        self.metrics[index] = m
        self.send("metrics", index=index, **m)
        return True

    def _sweep_point(self, index: int, kind: str, message: dict[str, Any]) -> bool:
        """A point of the learner's block-size sweep: kept for its curve, sent as no event of its own."""
        if kind == "occupancy":
            self.sweep_occupancies[index] = dict(message["occupancy"])
            return True
        timing = dict(message["timing"])
        median_ms = timing.get("median_ms")
        if not self._passed(index) or not median_ms:
            return True  # a wrong output at this block size: `block_sweep` says so, draws no time
        sizes = self.runs[index]["sizes"]
        m = work_metrics(self.job.exercise.harness.work, sizes, median_ms / 1000.0, self.ceilings).model_dump()
        m["shared_gpu"] = bool(self.others.get(index)) or self.shared_slice
        self.sweep_metrics[index] = m
        return True

    def block_sweep(self, chosen: int | None) -> list[dict[str, Any]]:
        """The sweep's points in block-size order: the learner's launch (size index `chosen`) and each other
        block size, with its bandwidth, % of the copy roof, resident warps per SM and whether it was right."""

        def point(index: int, metrics: dict[str, Any] | None, occupancy: dict[str, Any] | None) -> dict[str, Any]:
            run = self.runs[index]
            return {
                "block": run.get("sweep_block") or math.prod(run["block"]),
                "chosen": "sweep_block" not in run,
                "correct": metrics is not None,
                "median_seconds": (metrics or {}).get("median_seconds"),
                "bandwidth": (metrics or {}).get("bandwidth"),
                "bandwidth_pct": (metrics or {}).get("bandwidth_pct"),
                "resident_warps": resident_warps(occupancy),
                "shared_gpu": bool((metrics or {}).get("shared_gpu")),
            }

        points = [point(i, self.sweep_metrics.get(i), self.sweep_occupancies.get(i)) for i in self.sweep_occupancies]
        if chosen is not None:
            points.append(point(chosen, self.metrics.get(chosen), self.occupancies.get(chosen)))
        return sorted(points, key=lambda p: p["block"])

    def result_fields(self) -> dict[str, Any]:
        """`timing`, `metrics` and `occupancy` of the Result (None when nothing was measured)."""

        def per_size(found: dict[int, dict[str, Any]]) -> dict[str, Any] | None:
            if not found:
                return None
            return {"sizes": [{"index": i, "sizes": self.runs[i]["sizes"], **found[i]} for i in sorted(found)]}

        timing = per_size(self.timings)
        if timing is not None:
            timing["lock_held_seconds"] = round(self.lock_held_seconds, 4)
        return {
            "timing": timing,
            "metrics": per_size(self.metrics),
            "occupancy": per_size(self.occupancies),
        }
