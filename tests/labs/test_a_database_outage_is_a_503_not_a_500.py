"""While the database does not answer, a request gets a 503 that says so (JSON under /api/), never a 500.

The outage is real: the connection is pointed where no database is (a path SQLite cannot open, a port
PostgreSQL does not listen on), so the driver itself raises; the settings are put back afterwards.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def take_database_down():
    """Call it to start the outage (after logging in: that needs the database)."""
    saved = dict(connection.settings_dict)

    def down() -> None:
        connection.close()
        if connection.vendor == "sqlite":
            connection.settings_dict["NAME"] = "/nonexistent/warplab/db.sqlite3"
        else:
            connection.settings_dict.update(HOST="127.0.0.1", PORT="1")

    yield down
    connection.close()
    connection.settings_dict.clear()
    connection.settings_dict.update(saved)


def _client(user) -> Client:
    client = client_for(user)
    client.raise_request_exception = False  # the site's own handler answers, as in production
    return client


def test_an_api_call_during_an_outage_is_a_503_with_a_message_and_a_retry_after(alice, take_database_down):
    client = _client(alice)
    take_database_down()
    response = client.post("/api/submissions", {"exercise": "vector-add"}, content_type="application/json")
    assert response.status_code == 503 and response["Retry-After"] == "10"
    assert "database is not answering" in response.json()["error"]


def test_a_page_during_an_outage_is_a_friendly_503(alice, take_database_down):
    client = _client(alice)
    take_database_down()
    response = client.get("/")
    assert response.status_code == 503
    assert "database is not answering" in response.content.decode() and "Traceback" not in response.content.decode()


def test_another_server_error_is_still_a_500(alice, monkeypatch):
    from labs.views import pages

    monkeypatch.setattr(pages, "render", lambda *a, **k: 1 / 0)
    assert _client(alice).get("/").status_code == 500
