"""The OpenAPI 3 description of the JSON API under /api/, served at /api/openapi.json.

Written out here beside the views it describes, from the same limits they enforce
(`labs.api_input`, `gpu_worker.protocol`), so a change of a limit changes the schema. A test
walks the URL conf and fails when an `/api/` route or method exists that this document
lacks (tests/labs/test_the_api_has_an_openapi_schema.py), and Schemathesis fuzzes the site
against it. Every refusal is the `Error` shape: `{"error": "a plain sentence"}`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from gpu_worker.protocol import LANGUAGES, MAX_SOURCE_BYTES
from labs.api_input import max_body_bytes
from labs.models.run import Status, Verdict

JSON = "application/json"
ERROR_REF = {"$ref": "#/components/schemas/Error"}
REFUSALS = {
    400: "Refused: the body or a parameter is not what this endpoint takes, said in `error`.",
    401: "Not logged in.",
    403: "No valid CSRF token, or sent from another site.",
    404: "No such thing, or not yours to see.",
    405: "This method is not allowed here; the `Allow` header lists those that are.",
    409: "Not possible in the run's present state.",
    413: "The body or the source is over its size limit.",
    415: "The body is not sent as application/json.",
    429: "Too many runs: the per-minute rate, or one run already in flight.",
}


def _refusals(*statuses: int) -> dict[str, Any]:
    return {str(s): {"description": REFUSALS[s], "content": {JSON: {"schema": ERROR_REF}}} for s in statuses}


def _json(description: str, ref: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "nullable": True}


SUBMISSION_ID = {
    "name": "submission_id",
    "in": "path",
    "required": True,
    "description": "the run's `id`: random, never a count",
    "schema": {"type": "string", "format": "uuid"},
}
SESSION = [{"session": []}]  # a GET: the session cookie
SESSION_AND_CSRF = [{"session": [], "csrf_cookie": [], "csrf": []}]  # a POST: and the CSRF token, cookie and header


def _source_body(description: str, min_length: int = 0) -> dict[str, Any]:
    """A body naming an exercise, a language and a source: a new run's, a draft's."""
    return {
        "type": "object",
        "required": ["exercise", "language", "source"],
        "properties": {
            "exercise": {"type": "string", "minLength": 1, "maxLength": 100, "description": "an exercise's slug"},
            "language": {"type": "string", "enum": list(LANGUAGES)},
            "source": {
                "type": "string",
                "minLength": min_length,
                "maxLength": MAX_SOURCE_BYTES,
                "description": description,
            },
        },
    }


def _schemas() -> dict[str, Any]:
    state = {
        "type": "object",
        "required": [
            *("id", "number", "exercise", "language", "status", "verdict", "queue"),
            *("created_at", "url", "ws_url"),
        ],
        "properties": {
            "id": {"type": "string", "format": "uuid", "description": "what URLs name the run by"},
            "number": {"type": "integer", "description": "what pages call the run (#number)"},
            "exercise": {"type": "string"},
            "language": {"type": "string", "enum": list(LANGUAGES)},
            "status": {"type": "string", "enum": list(Status.values)},
            "verdict": _nullable({"type": "string", "enum": list(Verdict.values)}),
            "queue": {"type": "string"},
            "launch": _nullable({"type": "object"}),
            "created_at": {"type": "string", "format": "date-time"},
            "finished_at": _nullable({"type": "string", "format": "date-time"}),
            "url": {"type": "string"},
            "ws_url": {"type": "string"},
            "place": {
                "type": "object",
                "required": ["ahead", "wait_words"],
                "properties": {
                    "ahead": {"type": "integer", "minimum": 0},
                    "expected_wait_seconds": _nullable({"type": "number"}),
                    "wait_words": {"type": "string"},
                    "job_time_words": _nullable({"type": "string"}),
                },
            },
        },
    }
    detail = {
        "allOf": [
            {"$ref": "#/components/schemas/SubmissionState"},
            {
                "type": "object",
                "required": ["source", "result", "events"],
                "properties": {
                    "source": {"type": "string"},
                    "result": _nullable({"type": "object"}),
                    "events": {"type": "array", "items": {"type": "object"}},
                },
            },
        ]
    }
    new_run = _source_body(f"the program, at most {MAX_SOURCE_BYTES} bytes in UTF-8", min_length=1)
    new_run["properties"] |= {
        "block_size": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1024,
            "description": "threads per block, where the exercise offers a choice (`launch_choices`)",
        },
        "sweep": {
            "type": "boolean",
            "description": "also run every other block size offered, on a GPU, and draw the curve",
        },
    }
    return {
        "Error": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": {"type": "string", "minLength": 1, "pattern": r"\S"}},
        },
        "SubmissionState": state,
        "SubmissionDetail": detail,
        "SubmissionList": {
            "type": "object",
            "required": ["submissions"],
            "properties": {
                "submissions": {
                    "type": "array",
                    "maxItems": 50,
                    "items": {"$ref": "#/components/schemas/SubmissionState"},
                }
            },
        },
        "NewSubmission": new_run,
        "Draft": {
            "type": "object",
            "required": ["exercise", "language", "source", "saved_at"],
            "properties": {
                "exercise": {"type": "string"},
                "language": {"type": "string", "enum": list(LANGUAGES)},
                "source": {"type": "string"},
                "saved_at": {"type": "string", "format": "date-time"},
            },
        },
        "DraftList": {
            "type": "object",
            "required": ["drafts"],
            "properties": {
                "drafts": {
                    "type": "object",
                    "description": "one's drafts by language",
                    "additionalProperties": {"$ref": "#/components/schemas/Draft"},
                }
            },
        },
        "NewDraft": _source_body(f"the editor's text, at most {MAX_SOURCE_BYTES} bytes in UTF-8; it may be empty"),
        "Profile": {"type": "object", "required": ["profile"], "properties": {"profile": {"type": "object"}}},
    }


def _paths() -> dict[str, Any]:
    return {
        "/api/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This document.",
                "security": [],
                "responses": {
                    "200": {"description": "The OpenAPI document", "content": {JSON: {"schema": {"type": "object"}}}}
                },
            }
        },
        "/api/submissions": {
            "get": {
                "operationId": "listSubmissions",
                "summary": "One's own 50 latest runs, newest first.",
                "parameters": [
                    {
                        "name": "exercise",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "maxLength": 100},
                        "description": "only the runs of this exercise (its slug)",
                    }
                ],
                "responses": {"200": _json("One's runs", "SubmissionList"), **_refusals(400, 401)},
            },
            "post": {
                "operationId": "submitRun",
                "security": SESSION_AND_CSRF,
                "summary": "Submit a run: saved, then sent to its exercise's queue.",
                "description": f"The body is at most {max_body_bytes()} bytes, with or without a Content-Length.",
                "requestBody": {
                    "required": True,
                    "content": {JSON: {"schema": {"$ref": "#/components/schemas/NewSubmission"}}},
                },
                "responses": {
                    "201": _json("The new run", "SubmissionState"),
                    **_refusals(400, 401, 403, 404, 413, 415, 429),
                },
            },
        },
        "/api/drafts": {
            "get": {
                "operationId": "readDrafts",
                "summary": "One's drafts of an exercise, by language: the editor opens on them in any browser.",
                "parameters": [
                    {
                        "name": "exercise",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string", "minLength": 1, "maxLength": 100},
                        "description": "the exercise's slug",
                    }
                ],
                "responses": {"200": _json("One's drafts", "DraftList"), **_refusals(400, 401, 404)},
            },
            "put": {
                "operationId": "saveDraft",
                "security": SESSION_AND_CSRF,
                "summary": "Keep the editor's text as one's draft of an exercise in a language (replacing the last).",
                "requestBody": {
                    "required": True,
                    "content": {JSON: {"schema": {"$ref": "#/components/schemas/NewDraft"}}},
                },
                "responses": {"200": _json("The draft kept", "Draft"), **_refusals(400, 401, 403, 404, 413, 415)},
            },
        },
        "/api/submissions/{submission_id}": {
            "get": {
                "operationId": "readSubmission",
                "summary": "One run with its source, result and events (its owner, their course's staff, admins).",
                "parameters": [SUBMISSION_ID],
                "responses": {"200": _json("The run", "SubmissionDetail"), **_refusals(401, 404)},
            }
        },
        "/api/submissions/{submission_id}/profile": {
            "post": {
                "operationId": "profileSubmission",
                "security": SESSION_AND_CSRF,
                "summary": "Ask for the Nsight Compute report of an accepted GPU run.",
                "parameters": [SUBMISSION_ID],
                "responses": {
                    "200": _json("Already profiled, or being profiled", "Profile"),
                    "202": _json("Profiling queued", "Profile"),
                    **_refusals(401, 403, 404, 409),
                },
            }
        },
    }


def document() -> dict[str, Any]:
    """The whole OpenAPI 3.0 document, as a plain dict ready for JSON."""
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "WarpLab API",
            "version": "1",
            "description": "Submit GPU kernels and read their runs. Session login; a POST needs the CSRF token.",
        },
        "servers": [{"url": "/"}],
        "security": SESSION,
        "paths": _paths(),
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": settings.SESSION_COOKIE_NAME},
                "csrf_cookie": {"type": "apiKey", "in": "cookie", "name": settings.CSRF_COOKIE_NAME},
                "csrf": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-CSRFToken",
                    "description": "the csrf cookie's value",
                },
            },
        },
    }
