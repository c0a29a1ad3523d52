"""Logins are throttled (django-axes): after too many wrong passwords that user is paused from that address."""

import pytest
from django.test import Client

from tests.labs.factories import PASSWORD

pytestmark = pytest.mark.django_db


def log_in(client: Client, username: str, password: str):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR="10.0.0.7")


def test_five_wrong_passwords_lock_the_sixth_try_even_with_the_right_one(alice, bob, settings):
    settings.AXES_FAILURE_LIMIT = 5
    client = Client()
    for _ in range(4):
        assert log_in(client, "alice", "wrong").status_code == 200  # the form again, with its error
    locked = log_in(client, "alice", "wrong")
    assert locked.status_code == 429 and 'id="locked-out"' in locked.content.decode()
    assert log_in(client, "alice", PASSWORD).status_code == 429
    assert log_in(Client(), "bob", PASSWORD).status_code == 302  # bob is not held back by alice's attacker


def test_a_good_login_resets_the_count(alice, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(2):
        log_in(client, "alice", "wrong")
    assert log_in(client, "alice", PASSWORD).status_code == 302
    for _ in range(2):
        assert log_in(Client(), "alice", "wrong").status_code == 200
