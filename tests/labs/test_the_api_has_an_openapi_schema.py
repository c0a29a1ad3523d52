"""The API's OpenAPI document stays true: every /api/ route and method is in it, and nothing else is."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from jsonschema import Draft4Validator
from schemathesis.specs.openapi.definitions import OPENAPI_30

from labs import openapi

METHODS = {"get", "post", "put", "patch", "delete"}


def _routes(patterns: list, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        else:
            yield route, pattern


def api_routes() -> dict[str, set[str]]:
    """Each /api/ path of the URL conf as an OpenAPI template, with the methods its view allows."""
    found = {}
    for route, pattern in _routes(get_resolver().url_patterns):
        if route.startswith("api/"):
            template = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
            found[template] = {m.lower() for m in getattr(pattern.callback, "api_methods", ("?",))}
    return found


def test_every_api_route_and_method_is_in_the_document_and_nothing_more():
    documented = {path: set(item) & METHODS for path, item in openapi.document()["paths"].items()}
    assert api_routes() == documented


def test_every_path_parameter_is_declared():
    for path, item in openapi.document()["paths"].items():
        for operation in item.values():
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert declared == set(re.findall(r"{(\w+)}", path)), path


def test_every_operation_documents_its_refusals_in_the_error_shape():
    for path, item in openapi.document()["paths"].items():
        for method, operation in item.items():
            refusals = {status: r for status, r in operation["responses"].items() if status.startswith("4")}
            if operation.get("security") != []:
                assert "401" in refusals, (method, path)
            for response in refusals.values():
                assert response["content"]["application/json"]["schema"] == openapi.ERROR_REF, (method, path)


@pytest.mark.django_db
def test_the_document_is_served_to_anyone_and_is_valid_openapi():
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json() == openapi.document()
    Draft4Validator(OPENAPI_30).validate(response.json())  # the OpenAPI 3.0 meta-schema (Schemathesis ships it)


@pytest.mark.django_db
def test_the_document_refuses_other_methods_with_a_message():
    response = Client().post("/api/openapi.json")
    assert response.status_code == 405 and response.json()["error"]
