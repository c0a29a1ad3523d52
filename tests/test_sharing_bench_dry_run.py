"""bench/sharing_bench.py's dry run on the CPU: the scenarios run, and both files say their numbers are not a GPU's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "sharing_bench.py"


def test_a_dry_run_writes_the_table_and_says_it_is_not_a_gpu(tmp_path):
    subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "run",
            "--dry-run",
            "--seconds",
            "0.2",
            "--modes",
            "whole,timeslice",
            "--out-dir",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    document = json.loads((tmp_path / "sharing.json").read_text())
    assert document["dry_run"] is True and "not a GPU" in document["device"]
    assert [row["mode"] for row in document["summary"]] == ["whole", "timeslice"]
    assert "throughput_vs_whole" in document["summary"][1] and "noisy_neighbour_slowdown_p99" in document["summary"][1]
    assert "These numbers are not a GPU's" in (tmp_path / "sharing.md").read_text()
