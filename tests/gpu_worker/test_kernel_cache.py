"""A job's CuPy cache: a private copy of the worker's seed, handed to the job's user, bound read-only in the sandbox."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpu_worker.isolation import sandbox
from gpu_worker.measurement import kernel_cache
from gpu_worker.protocol import Limits


@pytest.fixture
def seed(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "seed"
    folder.mkdir()
    (folder / "0123abcd.cubin").write_bytes(b"harness kernel")
    (folder / "tmpx81k2").write_bytes(b"half-written")  # CuPy's temporary file, never a cache entry
    monkeypatch.setenv(kernel_cache.SEED_ENV, str(folder))
    monkeypatch.delenv(kernel_cache.CUPY_ENV, raising=False)
    return folder


def test_a_jobs_cache_is_a_fresh_folder_with_the_seeds_entries_and_in_use(seed, tmp_path):
    first = kernel_cache.prepare(tmp_path)
    second = kernel_cache.prepare(tmp_path)
    assert first != second and os.environ[kernel_cache.CUPY_ENV] == str(second)
    assert sorted(p.name for p in first.iterdir()) == ["0123abcd.cubin"]
    assert (first / "0123abcd.cubin").read_bytes() == b"harness kernel"
    (first / "learner.cubin").write_bytes(b"learner")
    assert not (seed / "learner.cubin").exists() and not (second / "learner.cubin").exists()


def test_without_a_seed_the_cache_starts_empty(tmp_path, monkeypatch):
    monkeypatch.setenv(kernel_cache.SEED_ENV, str(tmp_path / "missing"))
    assert list(kernel_cache.prepare(tmp_path).iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="handing files to another user needs root")
def test_the_cache_a_spare_made_as_root_is_handed_to_the_jobs_user(seed, tmp_path):
    folder = kernel_cache.prepare(tmp_path)
    kernel_cache.give_to(sandbox.NOBODY, sandbox.NOBODY)
    owners = {(p.stat().st_uid, p.stat().st_gid) for p in [folder, *folder.iterdir()]}
    assert owners == {(sandbox.NOBODY, sandbox.NOBODY)}
    shutil.rmtree(folder)


def test_the_sandbox_binds_the_seed_read_only_for_cuda_jobs_and_says_where_it_is(seed):
    plan = sandbox.plan("cuda", Limits(), [])
    assert plan.env[kernel_cache.SEED_ENV] == str(seed)
    if plan.argv[0].endswith("bwrap"):
        pairs = list(zip(plan.argv, plan.argv[1:], plan.argv[2:], strict=False))
        assert ("--ro-bind", str(seed), str(seed)) in pairs
    assert kernel_cache.SEED_ENV not in sandbox.plan("sim", Limits(), []).env
