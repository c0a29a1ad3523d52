"""Static feedback first: the compile report and the occupancy graphs arrive before the simulator's first check.

Through the real path (Redis, a Celery sim worker, the web worker storing events); nothing is mocked.
The SASS, which costs more than the compile, follows as a second `compiled` event and is in the result.
How fast this is, is measured in `bench/pipeline.py` (docs/benchmarks.md), never asserted here.
"""

from __future__ import annotations

import pytest

from gpu_worker.exercise.labspec import find_lab
from labs.runs import services
from tests import processes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

CASES = {case.name: case for case in find_lab("vector-add").cases}


@pytest.fixture(scope="module")
def workers(sim_pipeline):
    return sim_pipeline


def events_of(user, language: str, case: str):
    run = processes.wait_until_finished(services.submit_run(user, "vector-add", language, CASES[case].source))
    return run, [(e.type, e.payload) for e in run.events.order_by("seq")]


def first(events, kind: str, where=lambda payload: True) -> int:
    return next(i for i, (t, payload) in enumerate(events) if t == kind and where(payload))


def is_occupancy_figure(payload: dict) -> bool:
    return "Occupancy" in str(payload.get("title", ""))


def test_a_numba_kernels_registers_and_occupancy_come_before_its_first_check(workers, alice, labs_loaded):
    run, events = events_of(alice, "numba", "reference-numba")
    assert run.verdict == "accepted", run.result
    compiled, check = first(events, "compiled"), first(events, "check")
    assert events[compiled][1]["registers"] > 0  # ptxas's count, in the first report
    assert compiled < first(events, "occupancy") < first(events, "figure", is_occupancy_figure) < check
    assert first(events, "figure") == first(events, "figure", is_occupancy_figure)  # the occupancy graphs lead


def test_a_numba_kernels_sass_follows_in_a_later_report_and_stays_in_the_result(workers, alice, labs_loaded):
    run, events = events_of(alice, "numba", "reference-numba")
    reports = [payload for t, payload in events if t == "compiled"]
    assert not reports[0].get("sass_excerpt")  # disassembling waits until the report is out
    assert "STG" in reports[-1]["sass_excerpt"] and "c[i] = a[i] + b[i]" in reports[-1]["sass_excerpt"]
    assert reports[-1]["registers"] == reports[0]["registers"]
    assert "STG" in run.result["compile"]["sass_excerpt"]


def test_a_cuda_cpp_kernel_gets_its_report_occupancy_and_sass_before_its_run_on_the_cpu_tier(
    workers, alice, labs_loaded
):
    run, events = events_of(alice, "cuda", "reference-cuda")
    assert run.verdict == "accepted"  # its PTX on the CPU tier's executor
    compiled, done = first(events, "compiled"), first(events, "done")
    assert events[compiled][1]["registers"] > 0
    assert compiled < first(events, "figure", is_occupancy_figure) < done
    assert "STG" in run.result["compile"]["sass_excerpt"]
