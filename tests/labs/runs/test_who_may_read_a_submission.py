"""Only the owner, the staff of a course she studies in and admins may read a submission; anyone else gets a 404,
the same answer as for a run that does not exist. A run is named by a random id, so none is found by counting."""

import uuid

import pytest
from django.contrib.auth.models import User
from django.test import Client

from labs.models import Submission
from labs.models.run import Status
from labs.runs import services
from tests.labs.courses.factories import make_course, make_ta
from tests.labs.factories import client_for, make_instructor

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_run(alice, labs_loaded):
    return services.submit_run(alice, "vector-add", "numba", "print('hi')")


@pytest.fixture
def ians_course(ian, alice, bob):
    """ian teaches alice; olga teaches bob elsewhere."""
    course = make_course(ian, students=(alice,))
    make_course(make_instructor("olga"), "Elsewhere", students=(bob,))
    return course


def test_another_student_gets_a_404(alices_run, bob):
    response = client_for(bob).get(f"/api/submissions/{alices_run.public_id}")
    assert response.status_code == 404 and "source" not in response.json()


@pytest.mark.parametrize("persona", ["alice", "ian", "tess", "ada"])
def test_the_owner_her_courses_staff_and_an_admin_may_read_it(alices_run, ians_course, ian, persona, request):
    who = make_ta(ians_course, ian) if persona == "tess" else request.getfixturevalue(persona)
    response = client_for(who).get(f"/api/submissions/{alices_run.public_id}")
    assert response.status_code == 200 and response.json()["source"] == "print('hi')"


def test_an_instructor_of_another_course_gets_the_same_404_as_for_no_run_at_all(alices_run, ians_course):
    olga = client_for(User.objects.get(username="olga"))
    hers = olga.get(f"/api/submissions/{alices_run.public_id}")
    nobodys = olga.get(f"/api/submissions/{uuid.uuid4()}")
    assert hers.status_code == nobodys.status_code == 404 and hers.json() == nobodys.json()
    assert olga.post(f"/api/submissions/{alices_run.public_id}/profile").status_code == 404


def test_an_instructor_teaching_no_course_of_hers_reads_nothing_of_hers(alices_run, ian):
    assert client_for(ian).get(f"/api/submissions/{alices_run.public_id}").status_code == 404


def test_the_run_is_named_by_a_random_id_and_its_number_finds_nothing(alices_run, alice):
    mine = client_for(alice)
    state = mine.get("/api/submissions?exercise=vector-add").json()["submissions"][0]
    assert state["id"] == str(alices_run.public_id) and state["number"] == alices_run.pk
    name = alices_run.public_id
    assert (state["url"], state["ws_url"]) == (f"/api/submissions/{name}", f"/ws/submissions/{name}/")
    assert mine.get(f"/api/submissions/{alices_run.pk}").status_code == 404
    Submission.objects.filter(pk=alices_run.pk).update(status=Status.DONE)  # not held back as one in flight
    next_run = services.submit_run(alice, "coalescing", "numba", "print('hi')")
    assert next_run.pk == alices_run.pk + 1 and next_run.public_id.int != alices_run.public_id.int + 1


def test_a_visitor_must_log_in(alices_run):
    assert Client().get(f"/api/submissions/{alices_run.public_id}").status_code == 401


def test_the_exercise_page_needs_a_login(labs_loaded):
    response = Client().get("/exercises/vector-add/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_exercise_page_carries_the_editor_contract(alice, labs_loaded):
    page = client_for(alice).get("/exercises/vector-add/").content.decode()
    for needle in ('id="exercise-data"', 'id="editor"', 'id="submit"', 'id="events"', '<option value="numba">'):
        assert needle in page
