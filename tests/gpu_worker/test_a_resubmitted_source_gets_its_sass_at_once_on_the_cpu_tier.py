"""On the CPU tier a resubmitted source is shown the SASS listing its first run made (the engine's compile
cache): its verdict no longer waits for nvdisasm, the one step after the run it used to wait for."""

from __future__ import annotations

import json

import pytest
from engine_factories import alices_job, run

from gpu_worker.backends import compile_cache
from gpu_worker.exercise.labspec import find_lab


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.CACHE_ENV, str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("language", ["cuda", "numba"])
def test_a_resubmitted_source_is_shown_the_listing_its_first_run_made(cache_dir, language):
    source = find_lab("vector-add").references[language]
    first = run(alices_job(source, language)).result
    assert first.verdict == "accepted" and "STG" in (first.compile.sass_excerpt or "")
    (kept,) = (cache_dir / "compiled").glob("*.json")
    entry = json.loads(kept.read_text())
    assert entry["listing"]["sass_excerpt"] == first.compile.sass_excerpt
    entry["listing"]["sass_excerpt"] += "\n// kept by the first run"  # marks where the second run's listing comes from
    kept.write_text(json.dumps(entry))

    second = run(alices_job(source, language))
    assert second.result.verdict == "accepted"
    assert second.result.compile.sass_excerpt.endswith("// kept by the first run")
    reports = [e for e in second.events if e.type == "compiled"]
    assert not reports[0].model_dump().get("sass_excerpt")  # the compile report still leads, without it


def test_another_source_is_not_shown_the_kept_listing(cache_dir):
    source = find_lab("vector-add").references["cuda"]
    run(alices_job(source, "cuda"))
    (kept,) = (cache_dir / "compiled").glob("*.json")
    entry = json.loads(kept.read_text())
    entry["listing"]["sass_excerpt"] += "\n// kept by the first run"
    kept.write_text(json.dumps(entry))

    other = run(alices_job(source + "\n// one more line\n", "cuda")).result
    assert other.verdict == "accepted" and "STG" in other.compile.sass_excerpt
    assert "kept by the first run" not in other.compile.sass_excerpt
