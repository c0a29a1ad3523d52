"""The engine's compile cache: one key per source, language, argument types, GPU and toolchain, kept on disk
outside every sandbox, served only to that very source."""

from __future__ import annotations

import os

import pytest

from gpu_worker.backends import compile_cache
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Job

LAB = find_lab("vector-add")
H100 = "NVIDIA H100 80GB HBM3"


def job(language: str = "numba", source: str | None = None) -> Job:
    return Job(
        submission_id=1,
        exercise=LAB.exercise_ref(language),
        source=source if source is not None else LAB.references[language],
        requested_by="alice",
    )


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.CACHE_ENV, str(tmp_path))
    return tmp_path


def test_the_key_changes_with_the_source_the_language_and_the_gpu_and_nothing_else():
    first = compile_cache.key(job(), H100)
    assert first == compile_cache.key(job(), H100)  # a resubmission, another learner: the same key
    assert first != compile_cache.key(job(source=LAB.references["numba"] + "\n# a comment"), H100)
    assert first != compile_cache.key(job(), "NVIDIA H200")
    assert first != compile_cache.key(job("cuda"), H100)
    assert len(first) == 64 and int(first, 16) >= 0


def test_what_is_kept_is_served_to_its_key_only_and_merged():
    key, other = compile_cache.key(job(), H100), compile_cache.key(job("cuda"), H100)
    assert compile_cache.load(key) == {}
    assert compile_cache.store(key, {"answer": {"ok": True, "ptx": ".version 8.5", "symbol": "_Z3add"}})
    assert compile_cache.store(key, {"listing": {"sass_excerpt": "FADD"}, "junk": {"x": 1}})
    assert compile_cache.load(key) == {
        "answer": {"ok": True, "ptx": ".version 8.5", "symbol": "_Z3add"},
        "listing": {"sass_excerpt": "FADD"},
    }
    assert compile_cache.load(other) == {}


def test_an_entry_under_another_name_or_unreadable_is_not_served(cache_dir):
    key, other = compile_cache.key(job(), H100), compile_cache.key(job("cuda"), H100)
    compile_cache.store(key, {"answer": {"ptx": "A"}})
    folder = cache_dir / "compiled"
    os.replace(folder / f"{key}.json", folder / f"{other}.json")  # a file renamed under another source's key
    assert compile_cache.load(other) == {}
    (folder / f"{key}.json").write_text("{not json")
    assert compile_cache.load(key) == {}


def test_nothing_but_answers_and_listings_is_kept_and_an_oversized_one_is_refused():
    key = compile_cache.key(job(), H100)
    assert not compile_cache.store(key, {"verdict": {"accepted": True}})
    assert not compile_cache.store(key, {"answer": {"ptx": "x" * compile_cache.MAX_ENTRY_BYTES}})
    assert compile_cache.load(key) == {}


def test_past_its_size_the_least_recently_used_entries_go(cache_dir, monkeypatch):
    monkeypatch.setattr(compile_cache, "MAX_ENTRIES", 3)
    keys = [compile_cache.key(job(source=f"# {i}\n" + LAB.references["numba"]), H100) for i in range(4)]
    for age, key in enumerate(keys[:3]):
        compile_cache.store(key, {"answer": {"ptx": key}})
        os.utime(cache_dir / "compiled" / f"{key}.json", (1_000_000 + age, 1_000_000 + age))
    assert compile_cache.load(keys[0])  # the oldest, used again: now the most recent
    compile_cache.store(keys[3], {"answer": {"ptx": keys[3]}})
    assert compile_cache.load(keys[1]) == {}
    assert all(compile_cache.load(k) for k in (keys[0], keys[2], keys[3]))
