"""Logins are throttled (django-axes): after too many wrong passwords that user is paused from that address, and
after more, across any usernames, the address itself is paused."""

import pytest
from django.test import Client

from tests.labs.factories import PASSWORD

pytestmark = pytest.mark.django_db


def log_in(client: Client, username: str, password: str, address: str = "10.0.0.7"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


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


def test_one_wrong_password_across_25_usernames_pauses_the_address_even_for_a_right_one(alice, settings):
    settings.AXES_FAILURE_LIMIT = 5
    settings.WARPLAB_LOGIN_FAILURES_PER_ADDRESS = 25
    client = Client()
    for n in range(24):
        assert log_in(client, f"user{n}", "wrong").status_code == 200  # no one user reaches their five
    assert log_in(client, "user24", "wrong").status_code == 429
    refused = log_in(Client(), "alice", PASSWORD)  # a fresh user, the right password, the same address
    assert refused.status_code == 429 and 'id="locked-out"' in refused.content.decode()
    assert log_in(Client(), "alice", PASSWORD, address="10.0.0.8").status_code == 302  # another address is not


def test_a_good_login_takes_back_only_that_users_failures_from_the_address(bob, settings):
    settings.AXES_FAILURE_LIMIT = 5
    settings.WARPLAB_LOGIN_FAILURES_PER_ADDRESS = 6
    for n in range(4):
        assert log_in(Client(), f"user{n}", "wrong").status_code == 200
    assert log_in(Client(), "bob", "wrong").status_code == 200  # 5 from the address
    assert log_in(Client(), "bob", PASSWORD).status_code == 302  # bob's typo no longer counts: 4
    assert log_in(Client(), "user4", "wrong").status_code == 200  # 5
    assert log_in(Client(), "user5", "wrong").status_code == 429  # 6: the others' failures were kept
