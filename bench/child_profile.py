"""Where a GPU job's sandbox spends its CPU: warm jobs through the real engine, the measuring child profiled.

    source bench/device_setup.sh && python3 bench/child_profile.py --out DIR      # on the GPU machine

Runs vector-add's references (CUDA C++ and Numba, alternating) through `engine.run_job` on the cuda backend
with spare sandboxes on, as the Celery worker does, and `WARPLAB_CHILD_PROFILE` set: each job's measuring
child runs its job under cProfile on the CPU clock and prints its costliest functions to the job's output
(`isolation.child._profiled`). For each job it reports the sandbox's CPU seconds (its cgroup's, or its
living processes' at the final message: `isolation.tree_cpu`), its spare's warm-up at the hand-over and the
spare's own count by step. Writes child-profile.md (the table and the last job's profile per language) and
child-profile.json to --out. The first jobs are cold and warm the compile cache; only the later ones count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROFILE_TOP = "25"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=12, help="jobs in all, alternating languages")
    parser.add_argument("--backend", choices=("cuda", "sim"), default="cuda", help="sim: a smoke test here")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "bench-out")))
    args = parser.parse_args(argv)
    os.environ["WARPLAB_CHILD_PROFILE"] = PROFILE_TOP
    os.environ.setdefault("WARPLAB_SPARE_SANDBOX", "1")

    from bench.engine_sections import job
    from gpu_worker.engine import run_job
    from gpu_worker.exercise.labspec import find_lab
    from gpu_worker.isolation import spare

    lab = find_lab("vector-add")
    rows: list[dict[str, Any]] = []
    profiles: dict[str, str] = {}
    try:
        for index in range(args.jobs):
            language = ("cuda", "numba")[index % 2] if args.backend == "cuda" else "numba"
            started = time.perf_counter()
            result = run_job(job(lab.references[language], language), lambda event: None, backend=args.backend)
            box = result.sandbox or {}
            rows.append(
                {
                    "job": index,
                    "language": language,
                    "verdict": result.verdict,
                    "wall_s": round(time.perf_counter() - started, 3),
                    "warm_start": bool(box.get("warm_start")),
                    "cpu_s": box.get("cpu_seconds"),
                    "cpu_counted_by": box.get("cpu_counted_by"),
                    "warm_up_cpu_s": box.get("warm_up_cpu_seconds"),
                    "warm_up_steps_cpu_s": box.get("warm_up_steps_cpu_s") or {},
                }
            )
            marker = result.output.find("--- the child's profile")
            if marker >= 0:
                profiles[language] = result.output[marker:]
            time.sleep(0.5)  # a learner reading the verdict: the next spare warms meanwhile, as in a class
    finally:
        spare.shutdown()
    later = [r for r in rows[4:] if r["cpu_s"] is not None]

    def p50(key: str) -> float | None:
        values = [r[key] for r in later if r.get(key) is not None]
        return round(statistics.median(values), 3) if values else None

    steps = sorted({k for r in later for k in r["warm_up_steps_cpu_s"]})
    summary = {
        "sandbox_cpu_p50_s": p50("cpu_s"),
        "warm_up_cpu_p50_s": p50("warm_up_cpu_s"),
        "warm_up_steps_p50_s": {
            s: round(statistics.median([r["warm_up_steps_cpu_s"].get(s, 0.0) for r in later]), 4) for s in steps
        }
        if later
        else {},
    }
    lines = [
        "# A GPU job's sandbox CPU, job by job (bench/child_profile.py)",
        "",
        f"Summary of jobs 5 on: {json.dumps(summary)}",
        "",
        "| job | language | verdict | wall s | sandbox CPU s | counted by | spare warm-up CPU s | warm-up steps |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *[
            f"| {r['job']} | {r['language']} | {r['verdict']} | {r['wall_s']} | {r['cpu_s']} | {r['cpu_counted_by']} "
            f"| {r['warm_up_cpu_s']} | {r['warm_up_steps_cpu_s']} |"
            for r in rows
        ],
    ]
    for language, text in profiles.items():
        lines += ["", f"## The last {language} job's measuring child", "", "```", text.strip(), "```"]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "child-profile.md").write_text("\n".join(lines) + "\n")
    (args.out / "child-profile.json").write_text(json.dumps({"summary": summary, "jobs": rows}, indent=1))
    print("\n".join(lines[: 8 + len(rows)]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
