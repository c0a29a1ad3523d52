"""Fixtures for the labs tests: the real lab content loaded, and the personas."""

import pytest
from channels.layers import channel_layers

from labs.curriculum.services import sync_labs
from tests.labs.factories import make_admin, make_instructor, make_student


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """The personas' passwords hashed cheaply (no test here checks hashing strength; a login takes ~1 s otherwise)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def own_channel_layer():
    """Each test builds its own channel layer. The cached instance keeps state bound to the event loop of the test
    that used it first (channels_redis's receive lock and buffers), and pytest-asyncio gives each test a loop of its
    own: a later test's socket failed at its disconnect with "Lock ... is bound to a different event loop" (CI,
    2026-12-07). Clearing the cache is the remedy Channels' maintainers give (django/channels#876)."""
    channel_layers.backends.clear()


@pytest.fixture
def labs_loaded(db):
    sync_labs()


@pytest.fixture
def alice(db):
    return make_student("alice")


@pytest.fixture
def bob(db):
    return make_student("bob")


@pytest.fixture
def ian(db):
    return make_instructor("ian")


@pytest.fixture
def ada(db):
    return make_admin("ada")


@pytest.fixture(scope="module")
def labs_once(django_db_setup, django_db_blocker):
    """The lab content loaded once for a module whose tests each roll back (plain `db` tests only)."""
    from labs.models import Exercise, Module

    with django_db_blocker.unblock():
        sync_labs()
    yield
    with django_db_blocker.unblock():
        Exercise.objects.all().delete()
        Module.objects.all().delete()


@pytest.fixture(scope="module")
def sim_pipeline(django_db_setup, django_db_blocker):
    """A real web-queue worker and sim worker on the test database, for a module of integration tests."""
    from django.db import connection

    from tests import processes

    processes.purge_queues("sim", "web")
    db_url = processes.database_url(connection.settings_dict)
    web = processes.start_web_worker(db_url)
    sim = processes.start_sim_worker()
    yield web, sim
    sim.stop()
    web.stop()


@pytest.fixture
def keep_db_connection():
    """Keep the test's database connection open across requests served by the real WSGI or ASGI handler,
    as Django's test clients do (the handlers close it at each request's end, and the test's transaction with it)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)
