"""Bench sections through the real engine and sandbox on the cuda backend (vector-add, hostile kernels, sandbox).

Each job is `gpu_worker.engine.run_job(job, emit, backend="cuda")`, exactly what
the Celery task runs: a fresh sandboxed child per job.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import kernels  # noqa: E402
from bench.standalone import table  # noqa: E402
from gpu_worker.engine import run_job  # noqa: E402
from gpu_worker.exercise.labspec import find_lab  # noqa: E402
from gpu_worker.protocol import Event, Job, Result  # noqa: E402

_ids = itertools.count(50_000)


def job(source: str, language: str, wall_seconds: float | None = None) -> Job:
    exercise = find_lab("vector-add").exercise_ref(language)
    if wall_seconds is not None:
        exercise.limits.wall_seconds = wall_seconds
    return Job(submission_id=next(_ids), exercise=exercise, source=source, requested_by="bench")


def run(source: str, language: str, wall_seconds: float | None = None) -> tuple[Result, list[Event], float]:
    events: list[Event] = []
    t0 = time.perf_counter()
    first_result: list[float] = []

    def emit(e: Event) -> None:
        events.append(e)
        if e.type in ("timing", "check", "compile_error", "done", "error") and not first_result:
            first_result.append(time.perf_counter() - t0)

    result = run_job(job(source, language, wall_seconds), emit, backend="cuda")
    return result, events, (first_result or [time.perf_counter() - t0])[0]


def section_engine_vector_add() -> tuple[str, dict[str, Any]]:
    lab = find_lab("vector-add")
    rows, raw = [], {}
    for language in ("cuda", "numba", "cuda", "numba"):
        result, events, first = run(lab.references[language], language)
        raw.setdefault(language, []).append(result.model_dump())
        metrics = {m["index"]: m for m in (result.metrics or {}).get("sizes", [])}
        timing = {t["index"]: t for t in (result.timing or {}).get("sizes", [])}
        occ = {o["index"]: o for o in (result.occupancy or {}).get("sizes", [])}
        for index, check in enumerate(result.checks):
            t, m, o = timing.get(index, {}), metrics.get(index, {}), occ.get(index, {})
            rows.append(
                [
                    language,
                    check.sizes.get("n"),
                    result.verdict,
                    f"{t.get('median_ms', float('nan')) * 1000:.2f}",
                    f"{(t.get('hot_median_ms') or float('nan')) * 1000:.2f}",
                    f"{(m.get('bandwidth') or 0) / 1e9:.0f}",
                    f"{m.get('bandwidth_pct') or 0:.1f}%",
                    m.get("above_roof"),
                    t.get("repeats"),
                    f"{t.get('gpu_seconds', 0):.3f}",
                    f"{o.get('driver_blocks_per_sm')}/{(o.get('offline') or {}).get('active_blocks_per_sm')}",
                    f"{first:.2f}" if index == 0 else "",
                    f"{result.elapsed_seconds:.2f}" if index == 0 else "",
                ]
            )
        if not result.checks:
            rows.append([language, "-", result.verdict, result.message[:80], *[""] * 9])
    text = table(
        [
            "language",
            "n",
            "verdict",
            "median µs (cold)",
            "hot µs",
            "GB/s",
            "% of copy ceiling",
            "above roof",
            "repeats",
            "GPU s",
            "occupancy driver/offline",
            "first event s",
            "job s",
        ],
        rows,
    )
    return text, raw


HOSTILE = [
    ("hang (cuda)", "cuda", kernels.HANG, 8.0),
    ("__trap() (cuda)", "cuda", kernels.TRAP, None),
    ("illegal address (cuda)", "cuda", kernels.ILLEGAL_ADDRESS, None),
    ("far address (cuda)", "cuda", kernels.FAR_ADDRESS, None),
    ("assert() (cuda)", "cuda", kernels.DEVICE_ASSERT, None),
    ("__assertfail (cuda)", "cuda", kernels.DEVICE_ASSERT_DECL, None),
    ("illegal address (numba)", "numba", kernels.NUMBA_ILLEGAL, None),
    ("hang (numba)", "numba", kernels.NUMBA_HANG, 8.0),
    ("compile error (cuda)", "cuda", kernels.COMPILE_ERROR, None),
    (
        "network from the module (numba)",
        "numba",
        "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)\n" + kernels.NUMBA_VECTOR_ADD,
        None,
    ),
]


def section_engine_hostile() -> tuple[str, dict[str, Any]]:
    lab = find_lab("vector-add")
    rows, raw = [], []
    for name, language, source, wall in HOSTILE:
        result, _events, _ = run(source, language, wall)
        after, _, _ = run(lab.references[language], language)
        diag = result.compile.diagnostics[0] if result.compile and result.compile.diagnostics else None
        where = f" at {diag.line}:{diag.column}" if diag and diag.line else ""
        raw.append({"case": name, "result": result.model_dump(), "next_verdict": after.verdict})
        limit = f"limit {wall:g} s" if wall else ""
        rows.append(
            [
                name,
                result.verdict,
                (result.message + where)[:110].replace("|", "/"),
                f"{result.elapsed_seconds:.2f} {limit}",
                after.verdict,
                f"{after.elapsed_seconds:.2f}",
            ]
        )
    return table(["case", "verdict", "message", "job s", "next job", "next job s"], rows), {"runs": raw}


SECTIONS = {
    "engine_vector_add": section_engine_vector_add,
    "engine_hostile": section_engine_hostile,
}
