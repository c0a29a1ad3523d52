"""The private pipe between the engine and its sandboxed child.

The child's stdout and stderr belong to the learner (whatever their code
prints); the engine and the child talk over a separate pipe fd instead, so no
print can forge or break a message. A message is one JSON line. A message that
carries arrays lists them under `arrays` (name, dtype, shape, nbytes) and is
followed by their raw bytes, in that order, with no separator.

The reader is incremental and bounded: it is fed whatever the pipe gave and
never holds more than `max_bytes` in total, so a hostile child cannot make the
engine allocate without limit. Its parser cannot recurse without end: a line
nested deeper than `MAX_DEPTH` is refused before `json.loads` sees it, and a
header longer than its type's limit (`HEADER_LIMITS`) is refused whole.

`fit` cuts what a message may carry in words (messages, diagnostics, notes,
PTX and SASS excerpts) to fixed sizes, like program output: the child applies
it before it sends (a compile log of 2^18 warnings is an honest message, just
a long one) and the engine again on what it receives (the child shares its
process with the learner's code, so nothing it sends is trusted to be cut).
Everything the reader refuses is the learner's fault (`WireOverflow` for
sizes, `WireError` for shapes): a verdict, never an infrastructure error.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np

MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 32  # our messages nest 6 deep at most
MAX_ARRAYS = 16
HEADER_LIMITS = {"compiled": 2 << 20, "listing": 2 << 20, "compile_error": 2 << 20, "memory": 1 << 20}
DEFAULT_HEADER_LIMIT = 256 << 10
TEXT_LIMITS = {"message": 16 << 10, "ptx_excerpt": 512 << 10, "sass_excerpt": 512 << 10}
MAX_DIAGNOSTICS = 100
MAX_NOTES = 50
MAX_ITEM_CHARS = 2000
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
ARRAY_DTYPES = {"float32", "float64", "int32", "int64", "uint32", "uint8", "int8", "int16", "uint16", "uint64", "bool"}


class WireError(ValueError):
    """The child sent something that is not a well-formed message."""


class WireOverflow(WireError):
    """The child sent more, or larger, or deeper messages than any job needs (its message says how, plainly)."""


def _cut(text: Any, limit: int) -> str:
    text = str(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [cut: {len(text) - limit} more characters]"


def _cut_list(items: Any, most: int) -> list[Any]:
    return list(items)[:most] if isinstance(items, list) else []


def _fit_diagnostics(items: Any) -> list[Any]:
    fitted = []
    for d in _cut_list(items, MAX_DIAGNOSTICS):
        fitted.append({**d, "message": _cut(d.get("message", ""), MAX_ITEM_CHARS)} if isinstance(d, dict) else d)
    return fitted


def fit(message: dict[str, Any]) -> dict[str, Any]:
    """`message` with its words cut to the sizes above (a copy; numbers and arrays untouched)."""
    fitted = dict(message)
    if "message" in fitted:
        fitted["message"] = _cut(fitted["message"], TEXT_LIMITS["message"])
    if "diagnostics" in fitted:
        fitted["diagnostics"] = _fit_diagnostics(fitted["diagnostics"])
    for key in ("ptx_excerpt", "sass_excerpt"):
        if isinstance(fitted.get(key), str):
            fitted[key] = _cut(fitted[key], TEXT_LIMITS[key])
    if "notes" in fitted:
        fitted["notes"] = [_cut(n, MAX_ITEM_CHARS) for n in _cut_list(fitted["notes"], MAX_NOTES)]
    if isinstance(fitted.get("compile"), dict):
        fitted["compile"] = fit(fitted["compile"])
    return fitted


class MessageWriter:
    """Child side: write messages to the pipe fd."""

    def __init__(self, fd: int):
        self.fd = fd

    def _write_all(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]

    def send(self, message: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> None:
        arrays = arrays or {}
        contiguous = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
        if contiguous:
            message = {
                **message,
                "arrays": [
                    {"name": n, "dtype": str(a.dtype), "shape": list(a.shape), "nbytes": int(a.nbytes)}
                    for n, a in contiguous.items()
                ],
            }
        self._write_all(json.dumps(fit(message), default=str).encode() + b"\n")
        for a in contiguous.values():
            self._write_all(memoryview(a).cast("B"))  # type: ignore[arg-type]  # ndarray is a buffer


class MessageReader:
    """Engine side: feed bytes, get whole messages back (arrays decoded into `message["data"]`)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.total = 0
        self._buffer = bytearray()
        self._pending: dict[str, Any] | None = None  # a header whose arrays are still arriving

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self.total += len(data)
        if self.total > self.max_bytes:
            raise WireOverflow(f"your program sent more than {self.max_bytes} bytes of messages to the engine")
        self._buffer += data
        messages: list[dict[str, Any]] = []
        while True:
            message = self._next()
            if message is None:
                return messages
            messages.append(message)

    def _next(self) -> dict[str, Any] | None:
        if self._pending is None:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_LINE_BYTES:
                    raise WireOverflow(f"your program sent a message line over {MAX_LINE_BYTES} bytes")
                return None
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            self._pending = _parse_header(line)
        need = sum(a["nbytes"] for a in self._pending.get("arrays", []))
        if need > self.max_bytes:  # refused when announced, not after the rest of the job was read as its data
            raise WireOverflow(f"your program sent more than {self.max_bytes} bytes of messages to the engine")
        if len(self._buffer) < need:
            return None
        message, self._pending = self._pending, None
        data, offset = {}, 0
        for spec in message.get("arrays", []):
            raw = bytes(self._buffer[offset : offset + spec["nbytes"]])
            offset += spec["nbytes"]
            data[spec["name"]] = np.frombuffer(raw, dtype=spec["dtype"]).reshape(spec["shape"])
        del self._buffer[:need]
        if data:
            message["data"] = data
        return message


def depth(line: bytes) -> int:
    """How deeply `line`'s JSON nests (brackets inside strings do not count), without recursing."""
    bare = np.frombuffer(_STRING.sub(b'""', line), dtype=np.uint8)
    steps = np.isin(bare, (ord("["), ord("{"))).astype(np.int64) - np.isin(bare, (ord("]"), ord("}")))
    return int(np.cumsum(steps).max(initial=0))


def _parse_header(line: bytes) -> dict[str, Any]:
    if depth(line) > MAX_DEPTH:
        raise WireOverflow(f"your program sent a message nested more than {MAX_DEPTH} levels deep")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        raise WireError("a message is not valid JSON") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise WireError("a message has no type")
    kind = message["type"][:40]
    limit = HEADER_LIMITS.get(kind, DEFAULT_HEADER_LIMIT)
    if len(line) > limit:
        raise WireOverflow(f"your program sent a {kind!r} message of {len(line)} bytes, over the limit of {limit}")
    arrays = message.get("arrays", [])
    if not isinstance(arrays, list) or len(arrays) > MAX_ARRAYS:
        raise WireError("a message's arrays are not a short list")
    for spec in arrays:
        try:
            ok = (
                isinstance(spec["name"], str)
                and spec["dtype"] in ARRAY_DTYPES
                and len(spec["shape"]) <= 8
                and all(isinstance(d, int) and d >= 0 for d in spec["shape"])
                and isinstance(spec["nbytes"], int)
                and spec["nbytes"] == int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(spec["dtype"]).itemsize
            )
        except (KeyError, TypeError):
            ok = False
        if not ok:
            raise WireError("a message describes an array badly")
    return message
