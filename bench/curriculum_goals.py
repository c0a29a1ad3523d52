"""Every sample of the named labs on one backend, with each goal's measured figure: to set and check goal targets.

    python3 bench/curriculum_goals.py --backend cuda --out "$OUT/goals.json" saxpy fusion ...

Prints one line per case (verdict, goals met, each goal's reason) and writes the rows as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from the repository root

from gpu_worker.cli import make_job
from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("labs", nargs="+")
    args = parser.parse_args()
    rows = []
    for slug in args.labs:
        lab = find_lab(slug)
        for case in lab.cases:
            started = time.monotonic()
            job = make_job(lab.exercise_ref(case.language), case.source, backend=args.backend)
            result = run_job(job, lambda event: None, backend=args.backend)
            metrics = (result.metrics or {}).get("sizes") or []
            row = {
                "lab": slug,
                "case": case.name,
                "language": case.language,
                "expected": case.verdict_on(args.backend),
                "verdict": result.verdict,
                "goals_met": result.goals_met,
                "goals": [{k: g[k] for k in ("name", "measured", "target", "met")} for g in result.goals],
                "bandwidth_pct": [m.get("bandwidth_pct") for m in metrics],
                "flop_pct": [m.get("flop_pct") for m in metrics],
                "median_ms": [m.get("median_seconds") and 1000 * m["median_seconds"] for m in metrics],
                "seconds": round(time.monotonic() - started, 1),
                "message": result.message[:160],
            }
            rows.append(row)
            goals = "; ".join(f"{g['name']}={g['measured']} (target {g['target']}, {g['met']})" for g in row["goals"])
            print(f"{slug:15} {case.name:18} {case.language:6} {result.verdict:13} {goals}", flush=True)
            if args.out:
                args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
