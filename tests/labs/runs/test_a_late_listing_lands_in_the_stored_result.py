"""On the CPU tier the SASS listing comes after the verdict, numbered before `done`: the stored result gets it.

Whichever the web queue handles first, the result or the late listing, the run's result ends with the
listing in its compile report, and its story is told in seq order with `done` last.
"""

from __future__ import annotations

import time
import uuid

import pytest

from gpu_worker.exercise.labspec import find_lab
from labs.runs import services

pytestmark = [pytest.mark.django_db(transaction=True)]

COMPILED = {"type": "compiled", "registers": 16, "notes": []}
LATE = {**COMPILED, "seq": 4, "sass_excerpt": "// line 6: c[i] = a[i] + b[i];\n    FADD R9, R4, R3 ;", "notes": ["n"]}


@pytest.fixture
def run(alice, labs_loaded):
    run = services.submit_run(alice, "vector-add", "cuda", "__global__ void vector_add() {}")
    services.record_event(run.pk, {"type": "started", "seq": 2})
    services.record_event(run.pk, {**COMPILED, "seq": 3})
    return run


def finish(run) -> None:
    result = {"submission_id": run.pk, "verdict": "accepted", "backend": "sim", "device": "simulator"}
    services.record_result(run.pk, {**result, "compile": {"registers": 16}}, {"type": "done", "seq": 5})


def story(run) -> list[tuple[int, str]]:
    return [(e.seq, e.type) for e in run.events.order_by("seq")]


def test_a_listing_after_the_result_is_merged_into_it(run):
    finish(run)
    services.record_event(run.pk, LATE)
    run.refresh_from_db()
    assert run.result["compile"]["sass_excerpt"] == LATE["sass_excerpt"]
    assert run.result["compile"]["notes"] == ["n"] and run.result["compile"]["registers"] == 16
    assert story(run) == [(1, "queued"), (2, "started"), (3, "compiled"), (4, "compiled"), (5, "done")]


def test_a_listing_before_the_result_is_kept_by_it(run):
    services.record_event(run.pk, LATE)
    finish(run)
    run.refresh_from_db()
    assert run.result["compile"]["sass_excerpt"] == LATE["sass_excerpt"]
    assert story(run)[-1] == (5, "done")


def test_a_listing_numbered_after_done_is_neither_told_nor_kept(run):
    finish(run)
    services.record_event(run.pk, {**LATE, "seq": 6})
    run.refresh_from_db()
    assert not run.result["compile"].get("sass_excerpt") and story(run)[-1] == (5, "done")


@pytest.mark.integration
def test_a_new_cuda_sources_run_ends_with_done_and_its_result_has_the_listing(sim_pipeline, alice, labs_loaded):
    """Through the real workers: the verdict is stored first, the listing lands in it after."""
    source = find_lab("vector-add").references["cuda"] + f"\n// a new source: {uuid.uuid4()}\n"
    run = services.submit_run(alice, "vector-add", "cuda", source)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.finished and (run.result.get("compile") or {}).get("sass_excerpt"):
            break
        time.sleep(0.1)
    assert run.verdict == "accepted", run.result.get("message")
    assert "STG" in run.result["compile"]["sass_excerpt"]
    told = story(run)
    assert told[-1][1] == "done" and [t for _, t in told].count("compiled") == 2
    assert [s for s, _ in told] == list(range(1, len(told) + 1))
