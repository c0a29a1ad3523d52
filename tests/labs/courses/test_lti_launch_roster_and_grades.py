"""LTI 1.3 end to end against a local platform that signs real JWTs: OIDC login, launch into an assignment
(the user made and enrolled), roster through NRPS and the grade passed back through AGS."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from labs.courses import lti
from labs.models import LtiPlatform, LtiUser, Membership
from labs.models.course import Role
from tests.labs.courses.factories import fast_passwords, make_assignment, make_course, measured, run_at  # noqa: F401
from tests.labs.factories import client_for
from tests.labs.lti_platform import INSTRUCTOR, LEARNER, LocalPlatform

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


@pytest.fixture
def platform():
    with LocalPlatform() as local:
        yield local


@pytest.fixture
def linked(platform, ian, ada, labs_loaded):
    registered = lti.register_platform(
        ada,
        name="Canvas (local)",
        issuer=platform.issuer,
        client_id=platform.client_id,
        auth_login_url=f"{platform.base}/auth",
        auth_token_url=f"{platform.base}/token",
        key_set=platform.key_set,
        deployment_ids=[platform.deployment_id],
    )
    platform.tool_public_key = registered.tool_public_key
    course = make_course(ian)
    assignment = make_assignment(course, ian, goal=0.6)
    response = client_for(ian).post(
        f"/courses/{course.slug}/lti", {"platform": registered.pk, "context_id": platform.context_id}
    )
    assert response.status_code == 302
    target = f"http://testserver/courses/{course.slug}/a/{assignment.slug}/"
    return course, assignment, target


def _launch(platform, target, sub="lms-alice", roles=(LEARNER,), **claims):
    return platform.launch(Client(), target, sub, roles, **claims)


def test_a_learner_launches_into_the_assignment_is_enrolled_and_gets_the_grade_passed_back(platform, linked, ian):
    course, assignment, target = linked
    browser, response = _launch(platform, target)
    assert response.status_code == 302 and response["Location"] == f"/courses/{course.slug}/a/{assignment.slug}/"
    assert browser.get(response["Location"]).status_code == 200
    student = LtiUser.objects.get(sub="lms-alice").user
    assert Membership.objects.get(course=course, user=student).role == Role.STUDENT
    assert student.first_name == "Ada" and student.email == "lms-alice@lms.example.test"

    run_at(student, assignment.due_at - timedelta(hours=1), measured(roof_pct=60))
    page = client_for(ian).post(f"/courses/{course.slug}/a/{assignment.slug}/lti-grades")
    assert page.status_code == 200 and "Sent 1 grade(s) to the LMS" in page.content.decode()
    (score,) = platform.scores
    assert score["userId"] == "lms-alice" and score["scoreGiven"] == 10.0 and score["scoreMaximum"] == 10.0
    assert score["gradingProgress"] == "FullyGraded" and platform.refused == []


def test_the_roster_comes_from_the_platforms_names_and_roles_service(platform, linked, ian):
    course, _, target = linked
    _launch(platform, target, sub="lms-teacher", roles=(INSTRUCTOR,))  # a launch tells us the roster's URL
    platform.members = [
        {"user_id": "lms-bob", "roles": [LEARNER], "status": "Active", "given_name": "Bob", "email": "b@x.test"},
        {"user_id": "lms-gone", "roles": [LEARNER], "status": "Inactive"},
    ]
    page = client_for(ian).post(f"/courses/{course.slug}/lti", {"action": "sync"})
    assert page.status_code == 200 and "Enrolled from the LMS:" in page.content.decode()
    bob = LtiUser.objects.get(sub="lms-bob").user
    assert Membership.objects.get(course=course, user=bob).role == Role.STUDENT
    assert not LtiUser.objects.filter(sub="lms-gone").exists()
    teacher = LtiUser.objects.get(sub="lms-teacher").user
    assert Membership.objects.get(course=course, user=teacher).role == Role.INSTRUCTOR


def test_a_token_signed_by_another_key_is_refused(platform, linked):
    _, _, target = linked
    other = LocalPlatform()
    other.server.server_close()
    browser, response = _launch(platform, target, key=other.private_key)
    assert response.status_code == 400 and "not valid" in response.content.decode()
    assert not LtiUser.objects.exists()


def test_a_launch_from_an_lms_course_no_instructor_linked_is_refused(platform, linked):
    _, _, target = linked
    _, response = _launch(platform, target, context_id="someone-elses-course")
    assert response.status_code == 403 and "is not linked to a WarpLab course" in response.content.decode()
    assert not Membership.objects.filter(user__lti_identities__isnull=False).exists()


def test_only_an_admin_registers_a_platform_and_only_the_instructor_links_a_course(platform, linked, alice):
    course, _, _ = linked
    with pytest.raises(PermissionDenied):
        lti.register_platform(
            alice,
            name="x",
            issuer="i",
            client_id="c",
            auth_login_url="http://x",
            auth_token_url="http://x",
            deployment_ids=["d"],
            key_set={"keys": []},
        )
    response = client_for(alice).post(
        f"/courses/{course.slug}/lti", {"platform": LtiPlatform.objects.get().pk, "context_id": "x"}
    )
    assert response.status_code == 404  # alice is not in the course


def test_the_tools_keys_are_published(linked):
    keys = Client().get("/lti/jwks/").json()["keys"]
    assert len(keys) == 1 and keys[0]["kty"] == "RSA" and keys[0]["kid"]
