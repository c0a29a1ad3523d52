"""Nsight Compute's own logs from the H200, parsed as the lab parses them.

Taken 2026-12-02 with ncu 2025.3.1 by bench/ncu_vs_sim.py.

stride_32 reads one float in every 32 (each warp's load touches 32 sectors,
its store 4); the 32x32 tiled transpose reads its tile down a column (32-way
bank conflicts on the shared loads, none on the stores).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_worker.measurement import ncu

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"


def _facts(name: str, entry: str) -> dict:
    return ncu.parse_log((FIXTURES / f"ncu-{name}.csv").read_text(), entry)


def test_a_stride_32_load_touches_32_sectors_and_its_store_4():
    facts = _facts("stride_32", "copy_stride")
    assert facts["available"]
    assert facts["global_load_sectors_per_request"] == pytest.approx(32, abs=0.05)
    assert facts["global_store_sectors_per_request"] == pytest.approx(4, abs=0.05)
    assert facts["shared_load_ways"] is None
    assert 0 < facts["achieved_occupancy"] <= 100
    assert any(s.startswith("Each warp's global load touched 32 sectors") for s in facts["explanations"])
    assert facts["grid"] == "(16384, 1, 1)" and facts["block"] == "(256, 1, 1)"


def test_a_column_read_of_a_32_by_32_tile_is_a_32_way_bank_conflict():
    facts = _facts("tiled_32x32", "tiled_transpose")
    assert facts["shared_load_ways"] == pytest.approx(32, rel=0.05)
    assert facts["shared_store_ways"] == pytest.approx(1, rel=0.05)
    assert facts["shared_bank_conflicts"] > 0
    assert all(s.endswith(".") for s in facts["explanations"])
