"""Every course page and endpoint for the student, another course's student, the TA, another course's
instructor, the admin and an anonymous visitor: outsiders get 404, members without the role 403, anonymous
visitors the login page."""

import pytest
from django.test import Client

from labs.courses import services
from tests.labs.courses.factories import fast_passwords, make_assignment, make_course, make_ta, run_at  # noqa: F401
from tests.labs.factories import client_for, make_instructor

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]

PERSONAS = ("alice", "bob", "tess", "olga", "ian", "ada", "anonymous")
OK, DENIED, HIDDEN = 200, 403, 404
# page -> expected status for alice (student), bob (student elsewhere), tess (TA), olga (instructor elsewhere),
# ian (this course's instructor), ada (admin); anonymous is always sent to log in.
READS = {
    "/courses/": (OK, OK, OK, OK, OK, OK),
    "/courses/{c}/": (OK, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/a/{a}/": (OK, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/a/{a}/leaderboard/": (OK, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/gradebook/": (DENIED, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/gradebook/canvas.csv": (DENIED, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/gradebook/moodle.csv": (DENIED, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/a/{a}/students/alice/": (DENIED, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/a/{a}/integrity/": (DENIED, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/a/{a}/regrades/{r}/": (DENIED, HIDDEN, OK, HIDDEN, OK, OK),
    "/courses/{c}/assignments/new": (DENIED, HIDDEN, DENIED, HIDDEN, OK, OK),
    # the fleet's planner and dashboard are the admins' alone, staff or not
    "/fleet/plan/": (DENIED, DENIED, DENIED, DENIED, DENIED, OK),
    "/fleet/dashboard/": (DENIED, DENIED, DENIED, DENIED, DENIED, OK),
}
FOUND = 302  # a change that worked redirects to the page showing it
WRITES = {
    ("/courses/{c}/people", "board_names"): (DENIED, HIDDEN, DENIED, HIDDEN, FOUND, FOUND),
    # GPU time: the instructors set the course's budgets, an admin alone its ceiling
    ("/courses/{c}/people", "gpu_budget"): (DENIED, HIDDEN, DENIED, HIDDEN, FOUND, FOUND),
    ("/courses/{c}/people", "gpu_ceiling"): (DENIED, HIDDEN, DENIED, HIDDEN, DENIED, FOUND),
    ("/courses/{c}/a/{a}/overrides", "override"): (DENIED, HIDDEN, DENIED, HIDDEN, FOUND, FOUND),
    ("/courses/{c}/a/{a}/regrades", "regrade"): (DENIED, HIDDEN, DENIED, HIDDEN, FOUND, FOUND),
    ("/courses/{c}/a/{a}/basis", "grading_basis"): (DENIED, HIDDEN, DENIED, HIDDEN, FOUND, FOUND),
    ("/courses/{c}/a/{a}/students/alice/", "feedback"): (DENIED, HIDDEN, FOUND, HIDDEN, FOUND, FOUND),
    ("/fleet/plan/", "fleet_node"): (DENIED, DENIED, DENIED, DENIED, DENIED, FOUND),
}
BODIES = {
    "board_names": {"action": "board_names", "board_names": "named"},
    "gpu_budget": {"action": "gpu_budget", "gpu_period": "week", "gpu_seconds_per_student": "100"},
    "gpu_ceiling": {"action": "gpu_ceiling", "gpu_seconds_ceiling": "500"},
    "override": {"student": "alice", "due_at": "2030-01-01T00:00"},
    "regrade": {},
    "grading_basis": {"grading_basis": "correctness"},
    "feedback": {"text": "Try a grid-stride loop."},
    "fleet_node": {"action": "add-node", "name": "lab9", "hostname": ""},
}


@pytest.fixture
def world(ian, alice, bob, ada, labs_loaded):
    course = make_course(ian, students=(alice,))
    make_ta(course, ian, "tess")
    olga = make_instructor("olga")
    make_course(olga, "Elsewhere", students=(bob,))
    assignment = make_assignment(course, ian)
    regrade = services.start_regrade(assignment, ian)
    people = {"alice": alice, "bob": bob, "tess": course.memberships.get(user__username="tess").user}
    people |= {"olga": olga, "ian": ian, "ada": ada}
    return course, assignment, regrade, people


def _client(world, persona):
    return Client() if persona == "anonymous" else client_for(world[3][persona])


def _url(world, template):
    course, assignment, regrade, _ = world
    return template.format(c=course.slug, a=assignment.slug, r=regrade.pk)


def test_each_page_answers_each_persona_as_its_role_allows(world):
    wrong = []
    for page, statuses in READS.items():
        for persona, expected in zip(PERSONAS, (*statuses, FOUND), strict=True):
            response = _client(world, persona).get(_url(world, page))
            if response.status_code != expected or (persona == "anonymous" and "/login/" not in response["Location"]):
                wrong.append((page, persona, response.status_code, expected))
    assert wrong == []


def test_each_change_answers_each_persona_as_its_role_allows(world):
    wrong = []
    for (endpoint, body), statuses in WRITES.items():
        for persona, expected in zip(PERSONAS, (*statuses, FOUND), strict=True):
            response = _client(world, persona).post(_url(world, endpoint), BODIES[body])
            if response.status_code != expected or (persona == "anonymous" and "/login/" not in response["Location"]):
                wrong.append((endpoint, persona, response.status_code, expected))
    assert wrong == []


def test_the_staff_changes_of_people_are_the_instructors_alone(world):
    for persona, expected in (("tess", DENIED), ("alice", DENIED), ("olga", HIDDEN), ("ian", FOUND)):
        response = _client(world, persona).post(
            _url(world, "/courses/{c}/people"), {"action": "staff", "username": "bob"}
        )
        assert response.status_code == expected, persona


def test_a_ta_may_read_a_students_run_of_their_course_but_not_of_another(world, bob):
    course, assignment, _, people = world
    alices = run_at(people["alice"], assignment.release_at)
    bobs = run_at(bob, assignment.release_at)
    tess = client_for(people["tess"])
    assert tess.get(f"/api/submissions/{alices.public_id}").status_code == 200
    assert tess.get(f"/api/submissions/{bobs.public_id}").status_code == 404


def test_the_lti_endpoints_are_public_as_lti_needs_but_refuse_a_launch_without_a_signed_token(world):
    anonymous = Client()
    assert anonymous.get("/lti/jwks/").status_code == 200
    assert anonymous.post("/lti/launch/", {"state": "x"}).status_code == 400
    assert anonymous.post("/lti/login/", {"iss": "https://nobody.example"}).status_code == 400


def test_the_admin_lists_courses_with_members_and_platforms_without_their_private_key(world):
    ada = client_for(world[3]["ada"])
    course = world[0]
    assert ada.get("/admin/labs/course/").status_code == 200
    page = ada.get(f"/admin/labs/course/{course.pk}/change/").content.decode()
    assert "tess" in page
    assert ada.get("/admin/labs/ltiplatform/").status_code == 200
