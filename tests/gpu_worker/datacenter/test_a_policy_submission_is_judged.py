"""Alice's policy runs sandboxed; the worker replays its decisions and believes nothing else the child says."""

from __future__ import annotations

import textwrap

from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Job


def alices_policy_job(source: str, slug: str = "head-of-line") -> Job:
    return Job(
        submission_id=4242,
        exercise=find_lab(slug).exercise_ref("policy"),
        source=textwrap.dedent(source),
        requested_by="alice",
    )


def run(source: str):
    events = []
    result = run_job(alices_policy_job(source), events.append, backend="sim")
    return result, events


def test_an_accepted_policy_is_ranked_against_the_builtins_with_its_figures():
    result, events = run(find_lab("head-of-line").references["policy"])
    assert result.verdict == "accepted", result.message
    ranking = result.metrics["traces"][0]["ranking"]
    assert {r["name"] for r in ranking} == {"your policy", "fifo", "sjf", "gang", "easy", "tiresias", "gandiva"}
    assert [f["title"].split(" · ")[0] for f in result.figures] == [
        "Ranking",
        "Cluster utilisation over time",
        "Job completion time CDF",
        "Fairness",
    ]
    assert all("not measured" in f["figure"]["layout"]["meta"]["source"] for f in result.figures)
    assert [e.type for e in events][0] == "started" and events[-1].type == "done"


def test_forged_messages_cannot_make_an_impossible_schedule_count():
    result, _ = run(
        """
        import json, os, sys
        fd = int(sys.argv[2])  # the child's message pipe, written to directly
        for message in ({"type": "decisions", "index": 0, "decisions": [[0, 1, 2, 3]]},
                        {"type": "trace_done", "index": 0}, {"type": "finished", "mean_jct": 1.0}):
            os.write(fd, json.dumps(message).encode() + b"\\n")
        os._exit(0)

        def choose(queue, free_gpus, now):
            return []
        """
    )
    assert result.verdict == "wrong_answer", result.message
    assert "not in the queue" in result.message


def test_a_policy_that_raises_is_told_its_line():
    result, _ = run(
        """
        def choose(queue, free_gpus, now):
            return [job.id for job in queue if job.gpus / 0]
        """
    )
    assert result.verdict == "runtime_error"
    assert result.diagnostics[0].line == 3 and "ZeroDivisionError" in result.diagnostics[0].message


def test_a_file_without_choose_is_rejected_before_anything_runs():
    result, events = run("def schedule(queue, free_gpus, now):\n    return []\n")
    assert result.verdict == "rejected" and "choose" in result.message
    assert [e.type for e in events] == ["started", "done"]
