"""`python -m gpu_worker.occupancy_cli` (what `python -m gpu_worker occupancy` runs): JSON lines in, JSON lines out."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from gpu_worker.occupancy_cli import main, run

ROOT = Path(__file__).resolve().parents[2]


def lines(*objects: object) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objects)


def test_it_answers_each_configuration_with_one_json_line_and_carries_on_after_a_bad_one() -> None:
    stdin = lines(
        {
            "arch": "sm_90",
            "threads_per_block": 256,
            "registers_per_thread": 32,
            "static_shared_bytes": 0,
            "dynamic_shared_bytes": 0,
        },
        "this is not json",
        {
            "arch": "sm_80",
            "threads_per_block": 128,
            "registers_per_thread": 64,
            "static_shared_bytes": 1024,
            "dynamic_shared_bytes": 40000,
        },
        {"arch": "sm_99", "threads_per_block": 256, "registers_per_thread": 32},
        {"arch": "gfx942", "threads_per_block": 256, "registers_per_thread": 128},
    )
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_worker.occupancy_cli"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == 5
    first = out[0]
    assert (first["active_blocks_per_sm"], first["active_warps_per_sm"], first["occupancy"]) == (8, 64, 1.0)
    assert first["limited_by"] == "warps" and first["reason"]
    assert "error" in out[1] and "not JSON" in out[1]["error"]
    assert out[2]["limited_by"] == "shared_memory" and out[2]["active_blocks_per_sm"] == 3  # 3 x 42,112 B in 164 KiB
    assert "unknown architecture" in out[3]["error"]
    assert out[4]["what_if"] is True and out[4]["occupancy"] == 0.5


def test_it_names_missing_and_misspelt_fields() -> None:
    stdout = io.StringIO()
    run(io.StringIO(lines({"arch": "sm_90", "threads": 256, "registers_per_thread": 32})), stdout)
    (answer,) = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert "missing threads_per_block" in answer["error"] and "unknown field threads" in answer["error"]


def test_main_takes_a_default_arch_and_can_write_the_full_result(monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines({"threads_per_block": 1024, "registers_per_thread": 72})))
    stdout = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stdout)
    assert main(["--arch", "sm_86", "--full"]) == 0
    answer = json.loads(stdout.getvalue())
    assert answer["arch"] == "sm_86" and answer["launchable"] is False and answer["limited_by"] == "cannot_launch"
    assert "limits" in answer and "notes" in answer
