"""Every sample of the named labs on one backend, with each goal's measured figure: to set and check goal targets.

    python3 bench/curriculum_goals.py --backend cuda --out "$OUT/goals.json" saxpy fusion ...
    python3 bench/curriculum_goals.py --backend cuda --out "$OUT/goals.json" --modules 1 2 3

Prints one line per case (verdict, goals met, each goal's reason) and writes the rows as JSON; `--modules`
takes every lab of those modules (in module and exercise order) after the named ones. A row's `ok` says
whether the case got its expected verdict and, where it says one, its goals.
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
from gpu_worker.exercise.labspec import Lab, find_lab, load_all
from gpu_worker.figures.sweep import sweep_points


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--modules", type=int, nargs="*", default=[], help="every lab of these module numbers")
    parser.add_argument("labs", nargs="*")
    args = parser.parse_args()
    labs = [find_lab(slug) for slug in args.labs] + module_labs(args.modules)
    if not labs:
        parser.error("name labs or --modules")
    rows = []
    for lab in labs:
        slug = lab.spec.slug
        for case in lab.cases:
            started = time.monotonic()
            job = make_job(lab.exercise_ref(case.language), case.source, backend=args.backend)
            result = run_job(job, lambda event: None, backend=args.backend)
            metrics = (result.metrics or {}).get("sizes") or []
            goals_met = case.goals_met_on(args.backend, lab.spec.goals)
            ok = result.verdict == case.verdict_on(args.backend) and goals_met in (None, result.goals_met)
            row = {
                "lab": slug,
                "case": case.name,
                "language": case.language,
                "expected": case.verdict_on(args.backend),
                "verdict": result.verdict,
                "goals_met": result.goals_met,
                "expected_goals_met": goals_met,
                "ok": ok,
                "goals": [{k: g[k] for k in ("name", "measured", "target", "met")} for g in result.goals],
                "bandwidth_pct": [m.get("bandwidth_pct") for m in metrics],
                "flop_pct": [m.get("flop_pct") for m in metrics],
                "median_ms": [m.get("median_seconds") and 1000 * m["median_seconds"] for m in metrics],
                "seconds": round(time.monotonic() - started, 1),
                "message": result.message[:160],
            }
            if lab.spec.sweep is not None:  # the curve the learner sees: (x, y) per timed size
                occupancies = {o["index"]: o for o in (result.occupancy or {}).get("sizes") or []}
                row["sweep"] = sweep_points(lab.spec.sweep, {m["index"]: m for m in metrics}, occupancies)
            rows.append(row)
            goals = "; ".join(f"{g['name']}={g['measured']} (target {g['target']}, {g['met']})" for g in row["goals"])
            mark = "ok" if ok else "FAIL"
            print(f"{slug:22} {case.name:22} {case.language:6} {result.verdict:13} {mark:4} {goals}", flush=True)
            if args.out:
                args.out.write_text(json.dumps(rows, indent=1))


def module_labs(numbers: list[int]) -> list[Lab]:
    """Every lab of these modules, in module and exercise order."""
    labs = [lab for lab in load_all()[1] if lab.module.number in numbers]
    return sorted(labs, key=lambda lab: (lab.module.number, lab.spec.order, lab.spec.slug))


if __name__ == "__main__":
    main()
