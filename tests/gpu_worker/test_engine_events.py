"""run_job streams started, compiled, check and done, numbered from 2, and returns the same facts."""

from __future__ import annotations

import functools
import os

from engine_factories import ACCEPTED_ON_SIM, Run, alices_job, module_with, run

from gpu_worker import engine
from gpu_worker.backends import SIM_DEVICE
from gpu_worker.isolation import uid_pool


@functools.cache
def accepted_run() -> Run:
    return run(alices_job(module_with("print('hello from alice')")))


def test_it_emits_events_in_order_with_increasing_sequence_numbers_from_2():
    events = accepted_run().events
    story = sorted(events, key=lambda e: e.seq)  # a new source's SASS is told after `done`, numbered before it
    assert [e.type for e in story] == ACCEPTED_ON_SIM
    assert [e.seq for e in story] == list(range(2, 2 + len(ACCEPTED_ON_SIM)))
    assert all(a.at <= b.at for a, b in zip(events, events[1:], strict=False))


def test_started_names_the_backend_the_device_and_the_sandbox():
    started = accepted_run().events[0].model_dump()
    assert started["backend"] == "sim" and started["device"] == SIM_DEVICE
    assert started["sandbox"]["network"] is False and started["sandbox"]["tool"] in ("bwrap", "unshare")


def test_compiled_and_check_carry_their_facts():
    by_type = {e.type: e.model_dump() for e in accepted_run().events}
    compiled, check = by_type["compiled"], by_type["check"]
    assert compiled["registers"] > 0 and "ptx_excerpt" in compiled and compiled["tool"]
    assert check["passed"] is True and check["mismatches"] == [] and check["max_abs_error"] == 0.0


def test_the_result_is_accepted_with_the_learners_output_and_the_sandbox_it_ran_in():
    result = accepted_run().result
    assert result.verdict == "accepted" and result.backend == "sim" and result.device == SIM_DEVICE
    assert result.output.strip() == "hello from alice" and not result.output_truncated
    assert result.sandbox["uid"] in (65534, *uid_pool.uid_range()) and result.sandbox["network"] is False
    assert result.check.passed and len(result.checks) == 1 and result.elapsed_seconds > 0
    assert next(e for e in accepted_run().events if e.type == "done").model_dump()["verdict"] == "accepted"


def test_a_backend_this_worker_lacks_ends_the_job_in_an_error_event(monkeypatch):
    def missing(name):
        raise ImportError(f"No module named 'gpu_worker.backends.{name}'")

    monkeypatch.setattr(engine, "device_name", missing)
    events = []
    result = engine.run_job(alices_job(module_with("")), events.append, backend="cuda")
    assert result.verdict == "error" and "not available on this worker" in result.message
    assert [e.type for e in events] == ["started", "error"]


def test_it_leaks_no_file_descriptors_across_jobs():
    job = alices_job('extern "C" __global__ void vector_add(float* c) { c[0] = 1 }\n', "cuda")
    run(job)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(2):
        run(job)
    assert len(os.listdir("/proc/self/fd")) == before
