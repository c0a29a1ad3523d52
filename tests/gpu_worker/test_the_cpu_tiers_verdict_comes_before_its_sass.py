"""On the CPU tier a new source's verdict does not wait for its SASS listing (nvdisasm, 0.3 s of CPU).

The child sends `finished` before the listing; the engine tells `done` then, and the listing after it as a
`compiled` event numbered before `done` (the web side keeps it in its place and in the stored result). A
listing that never comes leaves a note in its place: the story still ends with `done`, with no gap.
Order of events only: no timing is asserted.
"""

from __future__ import annotations

import pytest
from engine_factories import alices_job, module_with, run

from gpu_worker.backends import compile_cache
from gpu_worker.exercise.labspec import find_lab


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.CACHE_ENV, str(tmp_path))  # nothing kept: every source is new
    return tmp_path


@pytest.mark.parametrize("language", ["cuda", "numba"])
def test_a_new_sources_done_is_told_before_its_listing_and_numbered_after_it(language):
    ran = run(alices_job(find_lab("vector-add").references[language], language))
    types = [e.type for e in ran.events]
    assert ran.result.verdict == "accepted"
    assert types[-2:] == ["done", "compiled"]  # told: the verdict first
    done, listing = ran.events[-2], ran.events[-1]
    assert "STG" in (listing.model_dump().get("sass_excerpt") or "")
    assert listing.seq < done.seq and listing.seq not in [e.seq for e in ran.events[:-1]]  # numbered: inside
    assert sorted(e.seq for e in ran.events) == list(range(ran.events[0].seq, done.seq + 1))  # no gap
    assert "STG" in (ran.result.compile.sass_excerpt or "")  # the returned result has it too


def test_a_resubmitted_sources_listing_still_comes_before_done():
    source = find_lab("vector-add").references["cuda"]
    run(alices_job(source, "cuda"))
    again = run(alices_job(source, "cuda"))
    assert [e.type for e in again.events][-2:] == ["figure", "done"]
    assert "STG" in (again.result.compile.sass_excerpt or "")


# The child stops right after its verdict: the listing never comes.
ENDS_AT_ITS_VERDICT = """
import os
from gpu_worker.isolation.wire import MessageWriter

_send = MessageWriter.send


def _send_then_end(self, message, arrays=None):
    _send(self, message, arrays)
    if message.get("type") == "finished":
        os._exit(0)


MessageWriter.send = _send_then_end
"""


def test_a_listing_that_never_comes_leaves_a_note_and_the_story_ends_with_done():
    ran = run(alices_job(module_with(ENDS_AT_ITS_VERDICT)))
    assert ran.result.verdict == "accepted"
    done, listing = ran.events[-2], ran.events[-1]
    assert (done.type, listing.type) == ("done", "compiled") and listing.seq < done.seq
    assert not listing.model_dump().get("sass_excerpt")
    assert "no SASS listing: the job ended before it came" in listing.model_dump()["notes"]
    assert sorted(e.seq for e in ran.events) == list(range(ran.events[0].seq, done.seq + 1))


def test_a_source_with_no_listing_to_come_ends_with_done_and_nothing_after():
    """Triton on the CPU tier sends no SASS after its verdict: nothing is held for it, no note is made."""
    ran = run(alices_job(find_lab("vector-add").references["triton"], "triton"))
    assert ran.result.verdict == "accepted", ran.result.message
    assert ran.events[-1].type == "done"
    assert sorted(e.seq for e in ran.events) == list(range(ran.events[0].seq, ran.events[-1].seq + 1))
    assert not any("no SASS listing" in n for n in ran.result.compile.notes)
