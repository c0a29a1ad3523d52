"""Every job ends through `protocol.Outcome.finish`: one result, one final event, and nothing after it."""

from __future__ import annotations

import pytest

from gpu_worker.protocol import FIRST_SEQ, RESULT_BYTES, Event, Outcome, Result

ALICES = 4242


def _outcome() -> tuple[Outcome, list[Event]]:
    events: list[Event] = []
    return Outcome(ALICES, events.append, "sim", "simulator"), events


def test_the_events_are_numbered_from_the_first_seq_and_done_carries_the_verdict_and_the_goals():
    outcome, events = _outcome()
    outcome.send("started", backend="sim")
    result = outcome.finish("accepted", "1 check passed", goals=[{"name": "fast"}], goals_met=True)
    assert [(e.type, e.seq) for e in events] == [("started", FIRST_SEQ), ("done", FIRST_SEQ + 1)]
    done = events[-1].model_dump()
    assert done["verdict"] == "accepted" and done["goals_met"] is True and done["goals"] == [{"name": "fast"}]
    assert result.device == "simulator" and result.elapsed_seconds is not None and result.sandbox == {}


def test_an_error_ends_in_an_error_event_and_the_result_carries_the_sandbox_known_so_far():
    outcome, events = _outcome()
    outcome.sandbox = {"network": False}
    result = outcome.finish("error", "the sandbox broke")
    assert [e.type for e in events] == ["error"] and events[0].model_dump()["message"] == "the sandbox broke"
    assert result.verdict == "error" and result.sandbox == {"network": False}


def test_nothing_is_sent_after_the_final_event():
    outcome, events = _outcome()
    outcome.finish("rejected", "your file is empty")
    with pytest.raises(RuntimeError, match="after its final event"):
        outcome.send("figure", title="late")
    assert [e.type for e in events] == ["done"]


def test_a_result_over_the_limit_is_the_learner_s_runtime_error_keeping_only_its_sandbox():
    outcome, events = _outcome()
    outcome.sandbox = {"uid": 65534}
    result = outcome.finish("accepted", "1 check passed", output="x" * (RESULT_BYTES + 1))
    assert result.verdict == "runtime_error" and "over the limit of" in result.message
    assert result.output == "" and result.sandbox == {"uid": 65534}
    assert events[-1].model_dump()["verdict"] == "runtime_error"


def test_an_infrastructure_error_result_is_built_in_one_place():
    result = Result.error(ALICES, "the worker gave up", "cuda", "none")
    assert (result.verdict, result.backend, result.device, result.message) == (
        "error",
        "cuda",
        "none",
        "the worker gave up",
    )
