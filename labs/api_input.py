"""The JSON API's and the WebSocket's one validation place: untrusted bytes in, plain values or a 4xx out.

Every body and message is read as hostile: bounded in size before parsing, bounded in
nesting depth (counted without recursion, so no RecursionError), integers bounded in
digits, strings refused when they hold a lone surrogate or a NUL (neither can be
stored), and each field checked for its type. A refusal is `BadInput`: a plain
message and the HTTP status (or WebSocket close reason) to answer with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from django.http.request import RawPostDataException

from gpu_worker.protocol import LANGUAGES, MAX_SOURCE_BYTES

MAX_DEPTH = 16
MAX_INT_DIGITS = 18


class BadInput(ValueError):
    """Input refused: a plain message for the person, and the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message, self.status = message, status


def max_body_bytes() -> int:
    return int(settings.WARPLAB_MAX_BODY_BYTES)


def _depth(value: Any) -> int:
    """How deep arrays and objects nest, counted with a stack (no recursion)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((child, depth) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise BadInput(f"A number in the body has more than {MAX_INT_DIGITS} digits.")
    return int(digits)


def check_strings(value: Any) -> None:
    """Refuse strings that cannot be stored: a lone surrogate (no UTF-8 form) or a NUL (PostgreSQL refuses it)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise BadInput("A text in the body contains a NUL character (\\u0000), which cannot be stored.")
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise BadInput("A text in the body contains a lone surrogate (not valid Unicode).") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def parse_json(raw: bytes | str, limit: int | None = None, what: str = "The request body") -> Any:
    """Parse untrusted JSON within a size, depth and digit budget; anything else is `BadInput`."""
    limit = max_body_bytes() if limit is None else limit
    if len(raw) > limit:
        raise BadInput(f"{what} is over the {limit // 1024} KiB limit.", status=413)
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise BadInput(f"{what} is not valid UTF-8 text.") from None
    too_deep = BadInput(f"{what} is nested more than {MAX_DEPTH} levels deep.")
    try:
        value = json.loads(text, parse_int=_bounded_int)
    except BadInput:
        raise
    except RecursionError:  # the C parser stops itself at the interpreter's limit: deep, whatever it held
        raise too_deep from None
    except ValueError:
        raise BadInput(f"{what} is not valid JSON.") from None
    if _depth(value) > MAX_DEPTH:
        raise too_deep
    check_strings(value)
    return value


def request_body(request: HttpRequest) -> bytes:
    """The body, refused past the size limit whether or not the client sent a Content-Length, and refused
    unless it is JSON: Django parses a form or multipart body as it is sent (the CSRF check reads it), after
    which the raw body can no longer be read."""
    limit = max_body_bytes()
    if request.content_type and request.content_type.lower() != "application/json":  # none: read as JSON
        raise BadInput(f"Send the body as application/json, not {request.content_type or 'no Content-Type'}.", 415)
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise BadInput("The Content-Length header is not a number.") from None
    if declared > limit:
        raise BadInput(f"The request body is over the {limit // 1024} KiB limit.", status=413)
    try:
        body = request.body
    except RequestDataTooBig:
        raise BadInput(f"The request body is over the {limit // 1024} KiB limit.", status=413) from None
    except RawPostDataException:  # read as a form already; only a JSON body reaches here, so this is a guard
        raise BadInput("The request body could not be read as JSON.", 415) from None
    if len(body) > limit:
        raise BadInput(f"The request body is over the {limit // 1024} KiB limit.", status=413)
    return body


@dataclass(frozen=True)
class SubmissionInput:
    """A new run as the API received it, each field of the right type (the services check the rest)."""

    exercise: str
    language: str
    source: str
    block_size: int | None = None  # the learner's block size, where the exercise offers a choice
    sweep: bool = False  # also run every other block size offered (on a GPU), for the curve


def _text_field(body: dict, name: str, missing: str, max_chars: int) -> str:
    value = body.get(name)
    if value is None:
        raise BadInput(missing)
    if not isinstance(value, str):
        raise BadInput(f"'{name}' must be a string, not {type(value).__name__}.")
    if len(value) > max_chars:
        raise BadInput(f"'{name}' is longer than {max_chars} characters.")
    return value


def _source_body(request: HttpRequest, what: str, no_source: str) -> tuple[dict, str, str, str]:
    """A body naming an exercise, a language and a source (a run's or a draft's): the body and those three."""
    body = parse_json(request_body(request))
    if not isinstance(body, dict):
        raise BadInput("The request body must be a JSON object with exercise, language and source.")
    exercise = _text_field(body, "exercise", f"Say which exercise this {what} is for ('exercise').", 100)
    language = _text_field(body, "language", f"Language must be one of {', '.join(LANGUAGES)}; got nothing.", 20)
    source = _text_field(body, "source", no_source, max_body_bytes())
    if len(source.encode()) > MAX_SOURCE_BYTES:
        raise BadInput(f"The {what}'s source is over the {MAX_SOURCE_BYTES // 1024} KiB limit.", status=413)
    return body, exercise, language, source


def submission_input(request: HttpRequest) -> SubmissionInput:
    """The body of `POST /api/submissions`, validated for shape and type."""
    body, exercise, language, source = _source_body(request, "run", "The source is empty.")
    block_size = body.get("block_size")
    if block_size is not None and (type(block_size) is not int or not 1 <= block_size <= 1024):
        raise BadInput("'block_size' must be a whole number of threads from 1 to 1024.")
    sweep = body.get("sweep", False)
    if type(sweep) is not bool:
        raise BadInput("'sweep' must be true or false.")
    return SubmissionInput(exercise=exercise, language=language, source=source, block_size=block_size, sweep=sweep)


@dataclass(frozen=True)
class DraftInput:
    """A draft as the API received it: the editor's text for one exercise and language (it may be empty)."""

    exercise: str
    language: str
    source: str


def draft_input(request: HttpRequest) -> DraftInput:
    """The body of `PUT /api/drafts`, validated for shape and type."""
    _, exercise, language, source = _source_body(
        request, "draft", "Send the draft's text as 'source' (it may be empty)."
    )
    if language not in LANGUAGES:
        raise BadInput(f"Language must be one of {', '.join(LANGUAGES)}; got {language!r}.")
    return DraftInput(exercise=exercise, language=language, source=source)


def query_text(request: HttpRequest, name: str, max_chars: int = 100) -> str | None:
    """One optional query parameter, bounded in length and storable."""
    value = request.GET.get(name)
    if value is None:
        return None
    if len(value) > max_chars:
        raise BadInput(f"The '{name}' parameter is longer than {max_chars} characters.")
    check_strings(value)
    return value
