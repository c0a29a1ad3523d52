"""A learner's draft is kept on the server per exercise and language, read back by her alone, and the exercise
page opens on it (issue 30, item 5; the browser side is tests/e2e/test_drafts_follow_the_student.py)."""

import json

import pytest
from django.test import Client

from gpu_worker.protocol import MAX_SOURCE_BYTES
from labs.models import SourceDraft
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db


def put(client: Client, body: dict | str):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.put("/api/drafts", data=data, content_type="application/json")


def draft(source: str, language: str = "numba", exercise: str = "vector-add") -> dict:
    return {"exercise": exercise, "language": language, "source": source}


def test_a_draft_is_kept_and_read_back_by_language(alice, labs_loaded):
    mine = client_for(alice)
    saved = put(mine, draft("x = 1\n"))
    assert saved.status_code == 200 and saved.json()["source"] == "x = 1\n" and saved.json()["saved_at"]
    put(mine, draft("// c\n", "cuda"))
    drafts = mine.get("/api/drafts?exercise=vector-add").json()["drafts"]
    assert {lang: d["source"] for lang, d in drafts.items()} == {"numba": "x = 1\n", "cuda": "// c\n"}


def test_saving_again_replaces_the_draft_and_moves_its_time(alice, labs_loaded):
    mine = client_for(alice)
    first = put(mine, draft("a")).json()
    second = put(mine, draft("ab")).json()
    assert SourceDraft.objects.filter(owner=alice).count() == 1
    assert SourceDraft.objects.get(owner=alice).source == "ab" and second["saved_at"] > first["saved_at"]


def test_an_empty_draft_is_kept_too(alice, labs_loaded):
    assert put(client_for(alice), draft("")).status_code == 200
    assert SourceDraft.objects.get(owner=alice).source == ""


def test_nobody_else_reads_her_draft(alice, bob, ian, labs_loaded):
    put(client_for(alice), draft("secret = 1\n"))
    for other in (bob, ian):
        assert client_for(other).get("/api/drafts?exercise=vector-add").json() == {"drafts": {}}
    assert Client().get("/api/drafts?exercise=vector-add").status_code == 401


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (draft("x", exercise="no-such-lab"), 404, "no exercise called"),
        (draft("x", language="policy"), 400, "not offered in policy"),
        (draft("x", language="cobol"), 400, "Language must be one of"),
        ({"exercise": "vector-add", "language": "numba"}, 400, "'source'"),
        (draft("x" * (MAX_SOURCE_BYTES + 1)), 413, "KiB limit"),
        ("[1, 2]", 400, "JSON object"),
    ],
)
def test_a_draft_that_cannot_be_kept_is_a_4xx_with_a_message(alice, labs_loaded, body, status, words):
    response = put(client_for(alice), body)
    assert response.status_code == status and words in response.json()["error"]
    assert not SourceDraft.objects.exists()


def test_reading_drafts_names_the_exercise(alice, labs_loaded):
    mine = client_for(alice)
    assert "exercise" in mine.get("/api/drafts").json()["error"]
    assert mine.get("/api/drafts?exercise=no-such-lab").status_code == 404


def test_the_exercise_page_opens_on_the_servers_copy(alice, labs_loaded):
    mine = client_for(alice)
    put(mine, draft("# from the other browser\n"))
    page = mine.get("/exercises/vector-add/")
    data = page.context["exercise_data"]
    assert data["drafts"]["numba"]["source"] == "# from the other browser\n"
    assert data["drafts_url"] == "/api/drafts" and 'id="draft-status"' in page.content.decode()
