"""One verdict list: `gpu_worker.protocol` writes it once; the model's choices and the page's labels follow it.

The frontend is JavaScript, so its lists are read from `frontend/src/format.js` as text: `VERDICTS` (the
values, in order), `VERDICT_LABELS` (one label each) and `BAD_VERDICTS` (the red ones).
"""

from __future__ import annotations

import re
from pathlib import Path

from gpu_worker.protocol import VERDICT_LABELS, VERDICTS, Result
from labs.models.run import Verdict

FORMAT_JS = Path(__file__).resolve().parent.parent / "frontend" / "src" / "format.js"


def _js_block(name: str, opening: str, closing: str, source: str | None = None) -> str:
    text = FORMAT_JS.read_text() if source is None else source
    found = re.search(rf"const {name} = {re.escape(opening)}(.*?){re.escape(closing)};", text, re.S)
    assert found, f"frontend/src/format.js: no `{name}` found"
    return found.group(1)


def _js_strings(name: str, opening: str = "[", closing: str = "]", source: str | None = None) -> list[str]:
    return re.findall(r'"([^"]*)"', _js_block(name, opening, closing, source))


def test_the_verdicts_are_the_literal_the_protocol_validates():
    assert Result.model_fields["verdict"].annotation.__args__ == VERDICTS
    assert list(VERDICT_LABELS) == list(VERDICTS)
    assert len(set(VERDICT_LABELS.values())) == len(VERDICTS), "two verdicts share a label"


def test_the_models_choices_are_the_protocols_verdicts_and_labels():
    assert Verdict.choices == [(v, VERDICT_LABELS[v]) for v in VERDICTS]
    assert Verdict.ACCEPTED == "accepted" and Verdict.ERROR == "error"


def test_the_page_lists_the_protocols_verdicts_in_order():
    assert _js_strings("VERDICTS") == list(VERDICTS)


def test_the_page_shows_each_verdict_with_the_protocols_label():
    pairs = re.findall(r'(\w+):\s*"([^"]*)"', _js_block("VERDICT_LABELS", "{", "}"))
    assert dict(pairs) == VERDICT_LABELS
    assert [key for key, _ in pairs] == list(VERDICTS)


def test_the_pages_red_verdicts_are_verdicts():
    bad = set(_js_strings("BAD_VERDICTS", "new Set([", "])"))
    assert bad and bad <= set(VERDICTS) - {"accepted", "not_run"}


def test_a_misspelt_verdict_on_the_page_would_be_caught():
    source = 'export const VERDICTS = [\n  "acepted",\n  "wrong_answer",\n];'
    assert _js_strings("VERDICTS", source=source) == ["acepted", "wrong_answer"] != list(VERDICTS)
