"""ian publishes his lab into his course: alice, his student, sees it and bob, in no course of his, does not,
until ada, an admin, publishes it into the public catalogue. A lab started as a copy gets a fresh uuid."""

from __future__ import annotations

import uuid

import pytest
import yaml
from django.core.exceptions import PermissionDenied

from labs.courses.services import CourseInputError
from labs.curriculum import authoring
from labs.models import Exercise, LabDraft
from labs.views.authoring import _folder_files
from tests.labs.courses.factories import fast_passwords, make_course  # noqa: F401
from tests.labs.curriculum.test_lab_authoring import _files
from tests.labs.factories import client_for, make_instructor, make_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


def _validated(ian) -> LabDraft:
    """ian's draft `my-add`, its samples' verdicts as expected (the sim runs themselves: test_lab_authoring)."""
    draft = authoring.save_draft(ian, "my-add", "silicon", _files())
    run = make_run(ian, exercise="vector-add", language="numba", queue="sim", verdict="accepted")
    draft.validation = [
        {"case": "reference-numba", "language": "numba", "expected": "accepted", "submission_id": run.pk}
    ]
    draft.save()
    return draft


def _sees(user, slug: str = "my-add") -> bool:
    client = client_for(user)
    listed = f'href="/exercises/{slug}/"' in client.get("/modules/silicon/").content.decode()
    opened = client.get(f"/exercises/{slug}/").status_code == 200
    assert listed == opened
    return opened


def test_a_lab_published_into_a_course_is_seen_by_its_members_only(ian, alice, bob, labs_loaded):
    course = make_course(ian, students=(alice,))
    _validated(ian)
    page = client_for(ian).post("/authoring/my-add/", {"action": "publish", "course": course.slug})
    assert 'id="published"' in page.content.decode() and "members of" in page.content.decode()
    assert Exercise.objects.get(slug="my-add").course == course
    assert _sees(alice) and _sees(ian)
    assert not _sees(bob)
    response = client_for(bob).post(
        "/api/submissions",
        data='{"exercise": "my-add", "language": "numba", "source": "x = 1\\n"}',
        content_type="application/json",
    )
    assert response.status_code == 404


def test_an_assignment_of_another_course_cannot_set_it(ian, alice, labs_loaded):
    course = make_course(ian, students=(alice,))
    authoring.publish(_validated(ian), ian, course)
    olga = make_instructor("olga")
    other = make_course(olga, "Other course")
    form = client_for(olga).get(f"/courses/{other.slug}/assignments/new").content.decode()
    assert 'value="my-add"' not in form
    assert 'value="my-add"' in client_for(ian).get(f"/courses/{course.slug}/assignments/new").content.decode()


def test_only_an_admin_publishes_into_the_public_catalogue(ian, alice, bob, ada, labs_loaded):
    course = make_course(ian, students=(alice,))
    draft = _validated(ian)
    with pytest.raises(CourseInputError, match="only an admin publishes into the public catalogue"):
        authoring.publish(draft, ian)
    assert client_for(ian).post("/authoring/my-add/", {"action": "publish", "course": ""}).status_code == 400
    olga = make_instructor("olga")
    with pytest.raises(PermissionDenied):
        authoring.publish(draft, ian, make_course(olga, "Olga's course"))
    authoring.publish(draft, ian, course)
    assert not _sees(bob)
    authoring.publish(LabDraft.objects.get(pk=draft.pk), ada)
    assert Exercise.objects.get(slug="my-add").course is None
    assert _sees(bob)


def test_a_copy_gets_a_fresh_uuid_in_its_lab_yaml_and_its_zip(ian, labs_loaded):
    response = client_for(ian).post("/authoring/", {"slug": "my-add", "module": "silicon", "copy_of": "vector-add"})
    assert response.status_code == 302
    original = yaml.safe_load(_folder_files(Exercise.objects.get(slug="vector-add"))["lab.yaml"])
    copied = yaml.safe_load(LabDraft.objects.get(slug="my-add").files["lab.yaml"])
    assert copied["slug"] == "my-add" and uuid.UUID(str(copied["uuid"])) != uuid.UUID(str(original["uuid"]))
    zipped = authoring.files_from_zip(client_for(ian).get("/authoring/my-add.zip").content)
    assert yaml.safe_load(zipped["lab.yaml"])["uuid"] == copied["uuid"]
