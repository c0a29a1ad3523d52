"""The MIG probe only reads: on a machine without NVML it says so; with one it names each GPU against the plan."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

PROBE = Path(__file__).resolve().parents[2] / "bench" / "mig_probe.py"


def _mig_probe():
    spec = importlib.util.spec_from_file_location("mig_probe", PROBE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_probe_reports_what_nvml_says_or_that_there_is_none(tmp_path):
    out = tmp_path / "mig.json"
    assert _mig_probe().main(["--json", str(out)]) == 0
    facts = json.loads(out.read_text())
    if facts["nvml"]:
        assert all({"name", "uuid", "mig_mode", "nvml_profiles", "planner_mismatches"} <= set(g) for g in facts["gpus"])
    else:
        assert facts["why"].startswith("NVML is not available here") and facts["gpus"] == []


def test_an_nvml_profile_the_planner_lacks_is_named():
    probe = _mig_probe()
    # the planner's own 3g.71gb figures in NVML's shape (not a measurement): the comparison is what is tested
    h200_3g = {"profile_id": 2, "slices": 3, "instances": 2, "sms": 60, "memory_mib": 71 * 1024}
    assert probe._compare("NVIDIA H200", [h200_3g]) == []
    odd = {**h200_3g, "sms": 58}
    assert probe._compare("NVIDIA H200", [odd]) == ["NVML profile 2: 3 slices, 58 SMs: no planner profile"]
    assert probe._compare("NVIDIA L4", []) == ["the planner does not know NVIDIA L4"]
