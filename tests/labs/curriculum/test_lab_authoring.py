"""Authoring a lab in the browser's terms: a draft from a copy or a zip, validation that names a bad field, every
sample run on sim by a real worker with its expected and actual verdicts, publishing only when they agree (at
the next version), drafts invisible to students, and the draft downloadable as a folder."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client

from labs.courses.services import CourseInputError
from labs.curriculum import authoring
from labs.models import Exercise, LabDraft
from labs.views.authoring import _folder_files
from tests import processes
from tests.labs.courses.factories import fast_passwords, make_course  # noqa: F401
from tests.labs.factories import client_for, make_instructor

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.integration,
    pytest.mark.usefixtures("fast_passwords"),
]


@pytest.fixture(scope="module")
def workers(django_db_setup, django_db_blocker):
    processes.purge_queues("sim", "web")
    web = processes.start_web_worker(processes.database_url(connection.settings_dict))
    sim = processes.start_sim_worker()
    yield
    sim.stop()
    web.stop()


def _files(**changes: str) -> dict[str, str]:
    """vector-add's folder as a new lab `my-add` in CUDA Python alone, with its reference and the off-by-one sample
    (two runs on sim per validation)."""
    files = _folder_files(Exercise.objects.get(slug="vector-add"))
    files = {p: t for p, t in files.items() if not p.endswith((".cu", ".triton.py"))}
    files = {p: t for p, t in files.items() if not p.startswith("tests/") or p.startswith("tests/off-by-one/")}
    lab_yaml = files["lab.yaml"].replace("slug: vector-add", "slug: my-add")
    lab_yaml = re.sub(r"^triton:\n(?:[ #].*\n)+", "", lab_yaml, flags=re.M)  # only a Triton lab has a triton block
    files["lab.yaml"] = re.sub(r"^languages: \[.*\]$", "languages: [numba]", lab_yaml, flags=re.M)
    return files | changes


def test_a_bad_lab_yaml_is_named_with_its_field_and_validation_queues_nothing(ian, labs_loaded):
    files = _files()
    files["lab.yaml"] = files["lab.yaml"].replace("entry:", "entree:")
    draft = authoring.save_draft(ian, "my-add", "silicon", files)
    with pytest.raises(CourseInputError, match=r"my-add/lab.yaml: field '(entry|entree)'"):
        authoring.validate(draft, ian)
    assert not Exercise.objects.filter(slug="my-add-draft").exists()


def _validate_and_wait(client, draft):
    client.post(f"/authoring/{draft.slug}/", {"action": "validate"})
    draft.refresh_from_db()
    for case in draft.validation:
        processes.wait_until_finished(
            Exercise.objects.get(slug="my-add-draft").submissions.get(pk=case["submission_id"])
        )
    return {s.case: (s.expected, s.actual) for s in authoring.validation_state(draft)}


def test_a_draft_is_published_only_once_every_sample_gets_its_verdict_on_sim(workers, ian, alice, labs_loaded):
    course = make_course(ian, students=(alice,))
    ians = client_for(ian)
    assert ians.post("/authoring/", {"slug": "my-add", "module": "silicon", "copy_of": "vector-add"}).status_code == 302
    files = _files()
    expected = "tests/off-by-one/expected.yaml"
    files[expected] = files[expected].replace("wrong_answer", "accepted")
    draft = authoring.save_draft(ian, "my-add", "silicon", files)
    assert _validate_and_wait(ians, draft)["off-by-one"] == ("accepted", "wrong_answer")
    page = ians.post("/authoring/my-add/", {"action": "publish", "course": course.slug})
    assert (
        page.status_code == 400
        and "tests/off-by-one: expected accepted on sim, got wrong_answer" in page.content.decode()
    )
    assert not Exercise.objects.filter(slug="my-add").exists()
    assert client_for(alice).get("/exercises/my-add-draft/").status_code == 404  # a draft is never a student's

    draft = authoring.save_draft(ian, "my-add", "silicon", _files())
    assert _validate_and_wait(ians, draft) == {
        "reference-numba": ("accepted", "accepted"),
        "off-by-one": ("wrong_answer", "wrong_answer"),
    }
    assert (
        'id="published"'
        in ians.post("/authoring/my-add/", {"action": "publish", "course": course.slug}).content.decode()
    )
    live = Exercise.objects.get(slug="my-add")
    assert live.published and client_for(alice).get("/exercises/my-add/").status_code == 200
    assert authoring.publish(LabDraft.objects.get(pk=draft.pk), ian, course).version == live.version + 1


def test_a_draft_downloads_as_a_folder_and_uploads_back_the_same(ian, labs_loaded):
    draft = authoring.save_draft(ian, "my-add", "silicon", _files())
    response = client_for(ian).get("/authoring/my-add.zip")
    assert response["Content-Type"] == "application/zip"
    assert authoring.files_from_zip(response.content) == draft.files


def test_only_instructors_author_and_only_the_author_sees_a_draft(ian, alice, ada, labs_loaded):
    authoring.save_draft(ian, "my-add", "silicon", _files())
    olga = make_instructor("olga")
    assert client_for(alice).get("/authoring/").status_code == 403
    assert client_for(alice).get("/authoring/my-add/").status_code == 403
    assert client_for(olga).get("/authoring/my-add/").status_code == 404
    assert client_for(olga).get("/authoring/my-add.zip").status_code == 404
    assert client_for(ian).get("/authoring/my-add/").status_code == 200
    assert client_for(ada).get("/authoring/my-add/").status_code == 200
    assert "/accounts/login/" in Client().get("/authoring/my-add/")["Location"]
    with pytest.raises(CourseInputError, match="built-in lab"):
        authoring.save_draft(ian, "vector-add", "silicon", _files())
