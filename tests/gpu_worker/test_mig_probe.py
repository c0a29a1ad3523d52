"""The MIG probe only reads: on a machine without NVML it says so and exits 0; with one it names each GPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_probe_reports_what_nvml_says_or_that_there_is_none(tmp_path):
    out = tmp_path / "mig.json"
    done = subprocess.run(
        [sys.executable, "bench/mig_probe.py", "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    facts = json.loads(out.read_text())
    if facts["nvml"]:
        assert all({"name", "uuid", "mig_mode", "nvml_profiles", "planner_mismatches"} <= set(g) for g in facts["gpus"])
    else:
        assert facts["why"].startswith("NVML is not available here") and facts["gpus"] == []
