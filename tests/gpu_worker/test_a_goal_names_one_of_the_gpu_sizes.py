"""A roof goal may read one GPU size (`size`, an index): a lab.yaml whose index names no GPU size is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from gpu_worker.exercise.labspec import LabError, find_lab, load_lab

OCCUPANCY = find_lab("occupancy").folder


def _copy_with_goals(tmp_path: Path, goals: list[dict]) -> Path:
    module = tmp_path / OCCUPANCY.parent.name
    module.mkdir()
    shutil.copy(OCCUPANCY.parent / "module.yaml", module / "module.yaml")
    folder = module / OCCUPANCY.name
    shutil.copytree(OCCUPANCY, folder)
    path = folder / "lab.yaml"
    data = yaml.safe_load(path.read_text())
    data["goals"] = goals
    path.write_text(yaml.safe_dump(data))
    return folder


def test_the_occupancy_lab_judges_its_roof_goal_at_the_first_gpu_size():
    [roof] = [g for g in find_lab("occupancy").spec.goals if g.metric == "roof_percent"]
    assert roof.size == 0


def test_an_index_past_the_gpu_sizes_is_refused_naming_the_field(tmp_path):
    folder = _copy_with_goals(tmp_path, [{"name": "roof", "metric": "roof_percent", "target": 50, "size": 6}])
    with pytest.raises(LabError, match=r"goals\[0\]\.size': 6 names none of the 6 GPU sizes"):
        load_lab(folder)


def test_a_size_on_a_goal_that_reads_no_timing_is_refused(tmp_path):
    folder = _copy_with_goals(tmp_path, [{"name": "occ", "metric": "occupancy_percent", "target": 25, "size": 0}])
    with pytest.raises(LabError, match="only a roof_percent goal reads one size"):
        load_lab(folder)
