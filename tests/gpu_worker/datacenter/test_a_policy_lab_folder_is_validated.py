"""A policy lab's `lab.yaml` is checked like a kernel lab's: a bad one fails naming the file and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from gpu_worker.exercise.labspec import LabError, find_lab, load_lab

HEAD_OF_LINE = find_lab("head-of-line").folder


def copy_with(tmp_path: Path, **changes) -> Path:
    module = tmp_path / "06-datacenter"
    shutil.copytree(HEAD_OF_LINE.parent, module, ignore=lambda d, names: [n for n in names if n == "least-attained"])
    path = module / "head-of-line" / "lab.yaml"
    data = yaml.safe_load(path.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))
    return module / "head-of-line"


def test_its_sample_submissions_are_in_the_policy_language():
    lab = find_lab("head-of-line")
    assert {case.language for case in lab.cases} == {"policy"}


def test_a_goal_against_an_unknown_builtin_is_refused(tmp_path):
    lab = find_lab("head-of-line")
    policy = lab.spec.policy.model_dump()
    policy["goals"] = [{"metric": "mean_jct", "baseline": "lottery", "ratio": 1.0}]
    with pytest.raises(LabError, match="policy.*lottery"):
        load_lab(copy_with(tmp_path, policy=policy))


def test_a_policy_lab_with_kernel_languages_is_refused(tmp_path):
    with pytest.raises(LabError, match="languages \\[policy\\]"):
        load_lab(copy_with(tmp_path, languages=["policy", "numba"]))
