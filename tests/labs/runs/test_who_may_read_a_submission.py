"""Only the owner, instructors and admins may read a submission; anyone else gets a 404."""

import pytest
from django.test import Client

from labs.runs import services
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_run(alice, labs_loaded):
    return services.submit_run(alice, "vector-add", "numba", "print('hi')")


def test_another_student_gets_a_404(alices_run, bob):
    response = client_for(bob).get(f"/api/submissions/{alices_run.pk}")
    assert response.status_code == 404 and "source" not in response.json()


@pytest.mark.parametrize("persona", ["alice", "ian", "ada"])
def test_the_owner_an_instructor_and_an_admin_may_read_it(alices_run, persona, request):
    response = client_for(request.getfixturevalue(persona)).get(f"/api/submissions/{alices_run.pk}")
    assert response.status_code == 200 and response.json()["source"] == "print('hi')"


def test_a_visitor_must_log_in(alices_run):
    assert Client().get(f"/api/submissions/{alices_run.pk}").status_code == 401


def test_the_exercise_page_needs_a_login(labs_loaded):
    response = Client().get("/exercises/vector-add/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_exercise_page_carries_the_editor_contract(alice, labs_loaded):
    page = client_for(alice).get("/exercises/vector-add/").content.decode()
    for needle in ('id="exercise-data"', 'id="editor"', 'id="submit"', 'id="events"', '<option value="numba">'):
        assert needle in page
