"""The tool's key set is published before any LMS is registered, and an admin registers one on a page (issue 30,
item 10): a local platform set up with the tool's key read off `/lti/jwks/` then takes the tool's signed requests."""

import json

import jwt
import pytest
from django.test import Client

from labs.models import LtiPlatform
from tests.labs.courses.factories import fast_passwords, make_assignment, make_course  # noqa: F401
from tests.labs.factories import client_for
from tests.labs.lti_platform import INSTRUCTOR, LocalPlatform

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


@pytest.fixture
def platform():
    with LocalPlatform() as local:
        yield local


def _form(platform: LocalPlatform, **changes) -> dict:
    return {
        "name": "Canvas (local)",
        "issuer": platform.issuer,
        "client_id": platform.client_id,
        "auth_login_url": f"{platform.base}/auth",
        "auth_token_url": f"{platform.base}/token",
        "key_set_url": "",
        "key_set": json.dumps(platform.key_set),
        "deployment_ids": f"{platform.deployment_id}, deployment-2",
    } | changes


def test_the_key_set_is_there_before_anything_is_registered_and_the_registration_signs_with_it(
    platform, ada, ian, labs_loaded
):
    assert not LtiPlatform.objects.exists()
    (published,) = Client().get("/lti/jwks/").json()["keys"]
    assert published["kty"] == "RSA" and published["kid"]
    # the LMS admin sets up the tool from its key set URL first, as Canvas or Moodle ask
    platform.tool_public_key = jwt.PyJWK(published).key

    admin = client_for(ada)
    page = admin.get("/lti/platforms/").content.decode()
    assert "http://testserver/lti/jwks/" in page and "http://testserver/lti/login/" in page
    assert published["kid"] in page and 'id="no-platforms"' in page

    done = admin.post("/lti/platforms/", _form(platform), follow=True)
    said = done.content.decode()
    assert done.status_code == 200 and "Registered Canvas (local)" in said and platform.issuer in said
    registered = LtiPlatform.objects.get()
    assert registered.deployment_ids == [platform.deployment_id, "deployment-2"]
    assert Client().get("/lti/jwks/").json()["keys"] == [published]  # the same key set, nothing to update

    course = make_course(ian)
    assignment = make_assignment(course, ian)
    teacher = client_for(ian)
    teacher.post(f"/courses/{course.slug}/lti", {"platform": registered.pk, "context_id": platform.context_id})
    target = f"http://testserver/courses/{course.slug}/a/{assignment.slug}/"
    _, launched = platform.launch(Client(), target, sub="lms-teacher", roles=(INSTRUCTOR,))
    assert launched.status_code == 302
    synced = teacher.post(f"/courses/{course.slug}/lti", {"action": "sync"})  # the tool's signed token request
    assert "Enrolled from the LMS:" in synced.content.decode()
    assert platform.tokens and platform.refused == []


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"auth_token_url": "not a url"}, "auth_token_url", "Enter a valid URL"),
        ({"deployment_ids": " , "}, "deployment_ids", "at least one deployment id"),
        ({"key_set": "{nope"}, "key_set", "not JSON"),
        ({"key_set": ""}, "key_set_url", "JWKS URL or its key set"),
    ],
)
def test_a_registration_that_cannot_be_made_says_why_on_the_form(platform, ada, changes, field, words):
    page = client_for(ada).post("/lti/platforms/", _form(platform, **changes))
    assert page.status_code == 400 and words in page.content.decode()
    assert f'data-field="{field}"' in page.content.decode() and not LtiPlatform.objects.exists()


def test_the_same_platform_twice_is_refused(platform, ada):
    admin = client_for(ada)
    admin.post("/lti/platforms/", _form(platform))
    again = admin.post("/lti/platforms/", _form(platform, name="Canvas again"))
    assert again.status_code == 400 and "is registered already" in again.content.decode()
    assert LtiPlatform.objects.count() == 1


def test_only_an_admin_registers(platform, alice, ian):
    for someone in (alice, ian):
        assert client_for(someone).post("/lti/platforms/", _form(platform)).status_code == 403
    assert Client().get("/lti/platforms/").status_code == 302 and not LtiPlatform.objects.exists()
