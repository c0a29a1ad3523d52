"""`bench/compare_pipeline.py` puts two committed load runs side by side, where a job waited included.

Read from run 32's committed results (H100, 2026-12-07): main's tree and run 30's, one call, one machine.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def test_the_load_table_puts_each_runs_throughput_hold_and_waits_side_by_side():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "compare_pipeline.py"),
            f"main={RESULTS / '2026-12-07-run32-pipeline-8w8l.json'}",
            f"bd64558={RESULTS / '2026-12-07-run32-pipeline-8w8l-baseline-bd64558.json'}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = {line.split(" | ")[0].lstrip("| "): line for line in out.splitlines() if line.startswith("| ")}
    assert rows["under the load"] == "| under the load | main | bd64558 |"
    assert rows["graded jobs an hour"] == "| graded jobs an hour | 11,149 | 10,172 |"
    assert rows["exclusive kind held per job, p50 / p95"].endswith("| 0.149 / 0.223 s | 0.265 / 0.421 s |")
    assert rows["samples a size, p50 / p95"] == "| samples a size, p50 / p95 | 120 / 225 | 120 / 420 |"
    first_hold = rows["inside the first size's hold, p50"]
    assert "cold_wait 10.3" in first_hold and first_hold.endswith("| – |")  # the baseline had no steps to count
