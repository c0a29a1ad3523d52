"""Schemathesis against the API's own OpenAPI document: at least 1000 generated requests, 0 server errors.

The schema is loaded from the site (`/api/openapi.json`) and every operation is fuzzed in-process
through Django's WSGI handler (the whole middleware stack: sessions, CSRF, auth), as alice, a
logged-in student, with her CSRF token pair. Each operation gets schema-valid (positive) and
schema-breaking (negative) cases, derandomised so the same requests run every time. Each answer
must be no 5xx, conform to the schema (status, content type, body), and be a JSON `error` message
when it is a 4xx. The requests really sent are counted at the WSGI door and the total asserted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core.wsgi import get_wsgi_application
from django.middleware.csrf import get_token
from django.test import RequestFactory
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.specs.openapi import checks as openapi_checks

from labs.runs import services
from tests.labs.factories import client_for

# Examples per operation and mode: 6 operations x 2 modes.
EXAMPLES = {GenerationMode.POSITIVE: 90, GenerationMode.NEGATIVE: 90}
AT_LEAST = 1000
# A schema-valid run can still be refused by rules a schema cannot state (the exercise does not offer that
# language, a fixed launch refuses `block_size`): those refusals are checked as 4xx with a message instead.
EXCLUDED = [openapi_checks.positive_data_acceptance]
# What may refuse a schema-breaking request: Schemathesis's list, and 413 for a body or source over its
# limit (which a generated over-long source meets first); a 5xx fails `_check_refusal` whatever this says.
REJECTIONS = [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]


class CountingApp:
    """A WSGI app in front of Django's that counts the requests it really served, by status."""

    def __init__(self, app: Callable) -> None:
        self.app, self.statuses = app, Counter[int]()

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        def counted(status: str, headers: list, exc_info: Any = None) -> Callable:
            self.statuses[int(status.split()[0])] += 1
            return start_response(status, headers, exc_info)

        return self.app(environ, counted)


@pytest.fixture
def wsgi_app(keep_db_connection) -> CountingApp:
    return CountingApp(get_wsgi_application())


@pytest.fixture
def alice_session(alice, labs_once, settings) -> tuple[dict[str, str], dict[str, str], str]:
    """alice's session and CSRF cookies, the CSRF header, and one run of hers to read and profile."""
    settings.WARPLAB_RUNS_IN_FLIGHT = 0
    settings.WARPLAB_RUNS_PER_MINUTE = 10**6
    settings.WARPLAB_QUEUE_CAP = 10**6
    run = services.submit_run(alice, "vector-add", "numba", "x = 1\n")
    token = get_token(RequestFactory().get("/"))
    session = client_for(alice).cookies[django_settings.SESSION_COOKIE_NAME].value
    cookies = {django_settings.SESSION_COOKIE_NAME: session, django_settings.CSRF_COOKIE_NAME: token}
    return cookies, {"X-CSRFToken": token}, str(run.public_id)


def _check_refusal(response: schemathesis.Response) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:300])
    if response.status_code >= 400:
        message = json.loads(response.content)["error"]
        assert isinstance(message, str) and message.strip(), response.text[:300]


def _steer(case: schemathesis.Case, run: str) -> None:
    """About half the valid cases name alice's real run or a real exercise, so successes are checked too
    (a generated id or slug almost never exists); the rest of each case is as generated."""
    if case.path_parameters and str(case.path_parameters.get("submission_id", "1"))[-1:] in "02468ace":
        case.path_parameters["submission_id"] = run
    if isinstance(case.query, dict) and len(str(case.query.get("exercise", ""))) % 2 == 0:
        case.query["exercise"] = "vector-add"
    if isinstance(case.body, dict) and len(case.body.get("exercise", "")) % 2 == 0:
        case.body["exercise"] = "vector-add"  # offers numba, cuda and triton, and a choice of block size
        if case.body.get("language") == "policy":
            case.body["language"] = "numba"


def _fuzz(operation: schemathesis.APIOperation, mode: GenerationMode, run: str, sent: Counter[str]) -> None:
    @settings(
        max_examples=EXAMPLES[mode],
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def one(case: schemathesis.Case) -> None:
        if mode is GenerationMode.POSITIVE:
            _steer(case, run)
        response = case.call()
        sent[operation.label] += 1
        _check_refusal(response)
        case.validate_response(response, excluded_checks=EXCLUDED)

    one()


@pytest.mark.django_db
def test_generated_requests_from_the_schema_get_no_server_error(wsgi_app, alice_session):
    cookies, headers, run = alice_session
    app = wsgi_app
    # alice's credentials for the document's security schemes; a negative case may leave one out on purpose.
    session, token = cookies[django_settings.SESSION_COOKIE_NAME], headers["X-CSRFToken"]
    auth = {"session": {"api_key": session}, "csrf_cookie": {"api_key": token}, "csrf": {"api_key": token}}
    config = schemathesis.Config.from_dict(
        {"auth": {"openapi": auth}, "checks": {"negative_data_rejection": {"expected-statuses": REJECTIONS}}}
    )
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", app, config=config)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 6  # every operation but the document itself, which Schemathesis loaded
    sent = Counter[str]()
    for operation in operations:
        for mode in EXAMPLES:
            _fuzz(operation, mode, run, sent)
    served = sum(app.statuses.values())  # the generated cases and the checks' own probes (auth left out, ...)
    print(f"schemathesis sent {sum(sent.values())} generated requests {dict(sent)}; the site served {served}:")
    print(dict(sorted(app.statuses.items())))
    assert sum(sent.values()) >= AT_LEAST, sent
    assert not [status for status in app.statuses if status >= 500], app.statuses
    assert app.statuses[201] and app.statuses[200], app.statuses  # it reached the views, not only the refusals
