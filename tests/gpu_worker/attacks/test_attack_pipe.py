"""Forged messages on the engine's pipe: too many, too deep, too big. Each is the learner's own runtime_error.

Alice's module writes to the child's message pipe (its fd is the child's last
argument) before the child sends its own report. Every row is one forgery and
the words the verdict must say; none may become an infrastructure `error`,
grow the events past an honest job's, or make a big stored result.
"""

from __future__ import annotations

import pytest
from attack_jobs import run_all
from engine_factories import alices_job, module_with

from gpu_worker.isolation import wire
from gpu_worker.isolation.message_budget import Budget, OverBudget
from gpu_worker.isolation.wire import MessageReader, WireError

WRITE = "import os, sys\nos.write(int(sys.argv[-1]), {})\n"  # the pipe's fd is the child's last argument
ARRAY_2GB = '{"name": "c", "dtype": "uint8", "shape": [2147483648], "nbytes": 2147483648}'
ROWS = [  # (attack, what alice writes: a Python expression of bytes, words of the verdict)
    ("5000 memory reports", """b'{"type": "memory", "index": 0, "memory": {}}\\n' * 5000""", "more than 1 'memory'"),
    ("3 compile reports", """b'{"type": "compiled", "compile": {}}\\n' * 3""", "more than 1 'compiled'"),
    ("a second hello, of uid 0", """b'{"type": "hello", "uid": 0, "gid": 0}\\n'""", "more than 1 'hello'"),
    ("100 messages of made-up types", """b'{"type": "x"}\\n' * 100""", "more than 16 messages of unknown"),
    ("JSON nested 100000 deep", """b'{"type": "x", "a": ' + b'[' * 100000 + b']' * 100000 + b'}\\n'""", "nested more"),
    ("a 5 MB message line", """b'{"type": "x", "a": "' + b'y' * (5 << 20) + b'"}\\n'""", "over 4194304 bytes"),
    ("a 1 MB hello", """b'{"type": "hello", "a": "' + b'y' * (1 << 20) + b'"}\\n'""", "over the limit"),
    ("outputs of 2 GB announced", f"""b'{{"type": "outputs", "index": 0, "arrays": [{ARRAY_2GB}]}}\\n'""", "bytes of"),
]


HUGE_VERDICT = """b'{"type": "runtime_error", "message": "' + b'm' * 200_000 + b'", "diagnostics": ['
    + b", ".join([b'{"line": 3, "message": "' + b"d" * 3000 + b'"}'] * 60) + b']}\\n'"""


@pytest.fixture(scope="module")
def outcomes():
    jobs = {name: alices_job(module_with(WRITE.format(body))) for name, body, _ in ROWS}
    jobs["huge verdict"] = alices_job(module_with(WRITE.format(HUGE_VERDICT.replace("\n", " "))))
    return run_all(jobs)


@pytest.mark.parametrize(("name", "body", "words"), ROWS, ids=[r[0] for r in ROWS])
def test_a_forged_message_is_the_learners_runtime_error_in_plain_words(outcomes, name, body, words):
    outcome = outcomes[name]
    assert outcome.result.verdict == "runtime_error", outcome.result.message
    assert words in outcome.result.message, outcome.result.message
    assert "pipe?" not in outcome.result.message
    assert len(outcome.events) <= Budget(1).events_most and len(outcome.json()) < 256 << 10
    if outcome.result.sandbox.get("uid") is not None:
        assert outcome.result.sandbox["uid"] != 0


def test_a_verdict_with_a_huge_message_and_diagnostics_is_stored_cut_to_size(outcomes):
    result = outcomes["huge verdict"].result
    assert result.verdict == "runtime_error"
    assert len(result.message) < 17_000 and all(len(d.message) < 2100 for d in result.diagnostics)
    assert len(result.model_dump_json()) < 400_000


# The same bounds, one message at a time, without a sandbox (cheap rows for the reader and the budget)
ONE_BYTE = b'{"name": "a", "dtype": "uint8", "shape": [1], "nbytes": 1}'
NINE_DIMS = b'{"name": "a", "dtype": "uint8", "shape": [1, 1, 1, 1, 1, 1, 1, 1, 1], "nbytes": 1}'
READER_ROWS = [
    (b"[" * 40 + b"]" * 40 + b"\n", "nested"),
    (b'{"type": "x", "arrays": [' + b", ".join([ONE_BYTE] * 20) + b"]}\n", "short list"),
    (b'{"type": "x", "arrays": [' + NINE_DIMS + b"]}\n", "describes an array badly"),
    (b'{"type": "outputs", "a": "' + b"z" * (300 << 10) + b'"}\n', "over the limit"),
]


@pytest.mark.parametrize(("line", "words"), READER_ROWS)
def test_the_reader_refuses_a_bad_line_without_recursing(line, words):
    with pytest.raises(WireError, match=words):
        MessageReader(64 << 20).feed(line)


def test_the_budget_allows_an_honest_jobs_messages_and_refuses_one_more():
    budget = Budget(sizes=3)
    for kind in ["hello", "compiled"] + ["outputs", "memory"] * 3 + ["listing", "finished"]:
        budget.count(kind)
    with pytest.raises(OverBudget, match="more than 3 'outputs' messages"):
        budget.count("outputs")


def test_an_honest_compile_report_of_thousands_of_warnings_is_cut_not_refused():
    diagnostics = [{"line": 1, "severity": "warning", "message": "w" * 500} for _ in range(1 << 14)]
    fitted = wire.fit({"type": "compile_error", "message": "x", "diagnostics": diagnostics, "compile": {}})
    assert len(fitted["diagnostics"]) == wire.MAX_DIAGNOSTICS
    assert len(wire.json.dumps(fitted)) < wire.HEADER_LIMITS["compile_error"]
