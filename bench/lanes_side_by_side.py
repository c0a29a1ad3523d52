"""Active lanes per request on both tiers, a line per sample: the CPU tier's memory trace beside Nsight Compute's.

    python3 bench/lanes_side_by_side.py SIM.json CUDA.json

SIM.json is `python -m gpu_worker check-labs --backend sim --json`'s, CUDA.json the same run's on the GPU with
`--ncu-goals` (bench/device_session.sh's `ncu-lanes` step writes both). For each sample with a `lanes_per_request`
goal it prints the simulator's figure, the GPU's (from the SASS source page: its reason names the site), and
whether they agree, so a first device run shows whether ptxas's SASS keeps the PTX's sites (see
gpu_worker/measurement/ncu_source.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

METRIC = "lanes_per_request"


def _cases(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["lab"], c["case"]): c for c in json.loads(path.read_text())["cases"]}


def _lanes(goals: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    return {g["name"]: g for g in goals or [] if g.get("metric") == METRIC}


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def lines(sim: dict[tuple[str, str], dict[str, Any]], cuda: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """One line per (sample, lanes goal): both figures, whether they agree, and the GPU's reason."""
    out = []
    for key in sorted(set(sim) | set(cuda)):
        on_sim = _lanes((sim.get(key) or {}).get("goals"))
        record = (cuda.get(key) or {}).get("ncu_goals") or {}
        on_gpu = _lanes(record.get("goals"))
        for name in sorted(set(on_sim) | set(on_gpu)):
            a = on_sim.get(name, {}).get("measured")
            b = on_gpu.get(name, {}).get("measured")
            same = "agree" if a is not None and b is not None and abs(a - b) < 0.5 else "DIFFER"
            if a is None or b is None:
                same = "one side unmeasured"
            why = on_gpu.get(name, {}).get("reason") or record.get("reason") or "no ncu record"
            out.append(f"{key[0]:16} {key[1]:22} sim {_figure(a):>6}  gpu {_figure(b):>6}  {same}: {why}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = lines(*(_cases(Path(p)) if Path(p).exists() else {} for p in argv))
    print("\n".join(found) if found else "no sample with an active-lanes goal in either file")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
