"""Fixtures for the labs tests: the real lab content loaded, and the personas."""

import pytest

from labs import services
from tests.labs.factories import make_admin, make_instructor, make_student


@pytest.fixture
def labs_loaded(db):
    services.sync_labs()


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
