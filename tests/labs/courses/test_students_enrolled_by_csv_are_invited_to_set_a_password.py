"""ian enrols students by CSV; each new account gets a single-use link to set its password, shown and mailed."""

import re

import pytest
from django.core import mail
from django.test import Client

from tests.labs.courses.factories import fast_passwords, make_course  # noqa: F401
from tests.labs.factories import client_for

ROSTER = "username,email\ncarol,carol@uni.example\ndave,\nalice,\n"
LINK = re.compile(r'data-username="(\w+)">.*?class="invitation"[^>]*value="([^"]+)"')

pytestmark = pytest.mark.usefixtures("fast_passwords")


def _enrol(ian) -> dict[str, str]:
    course = make_course(ian)
    response = client_for(ian).post(f"/courses/{course.slug}/people", {"action": "roster", "roster_text": ROSTER})
    assert response.status_code == 200
    return dict(LINK.findall(response.content.decode()))


def _set_password(link: str, password: str) -> Client:
    client = Client()
    form = client.get(link, follow=True)
    assert form.status_code == 200 and b'id="set-password"' in form.content
    done = client.post(form.redirect_chain[-1][0], {"new_password1": password, "new_password2": password})
    assert done.status_code == 302 and done["Location"] == "/accounts/invitation/done/"
    return client


def test_the_page_shows_a_link_for_each_new_student_and_none_for_one_who_had_an_account(ian, alice):
    links = _enrol(ian)
    assert sorted(links) == ["carol", "dave"]
    assert all(link.startswith("http://testserver/accounts/invitation/") for link in links.values())


def test_the_link_is_mailed_to_a_new_student_with_an_email_address(ian, alice):
    links = _enrol(ian)
    assert [m.to for m in mail.outbox] == [["carol@uni.example"]]
    assert links["carol"] in mail.outbox[0].body


def test_following_the_link_the_student_sets_a_password_and_logs_in_with_it(ian, alice):
    links = _enrol(ian)
    _set_password(links["carol"], "warp-drive-42")
    client = Client()
    login = client.post("/accounts/login/", {"username": "carol", "password": "warp-drive-42"})
    assert login.status_code == 302 and login["Location"] == "/"
    assert client.get("/courses/").status_code == 200


def test_the_link_does_not_work_twice(ian, alice):
    links = _enrol(ian)
    _set_password(links["dave"], "warp-drive-42")
    again = Client().get(links["dave"], follow=True)
    assert b'id="invalid-link"' in again.content and b'id="set-password"' not in again.content


def test_a_link_expires(ian, alice, settings):
    links = _enrol(ian)
    settings.PASSWORD_RESET_TIMEOUT = -1
    assert b'id="invalid-link"' in Client().get(links["dave"], follow=True).content
