"""The private pipe between the engine and its sandboxed child.

The child's stdout and stderr belong to the learner (whatever their code
prints); the engine and the child talk over a separate pipe fd instead, so no
print can forge or break a message. A message is one JSON line. A message that
carries arrays lists them under `arrays` (name, dtype, shape, nbytes) and is
followed by their raw bytes, in that order, with no separator.

The reader is incremental and bounded: it is fed whatever the pipe gave and
never holds more than `max_bytes` in total, so a hostile child cannot make the
engine allocate without limit.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

MAX_LINE_BYTES = 4 * 1024 * 1024
ARRAY_DTYPES = {"float32", "float64", "int32", "int64", "uint32", "uint8", "int8", "int16", "uint16", "uint64", "bool"}


class WireError(ValueError):
    """The child sent something that is not a well-formed message."""


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
        self._write_all(json.dumps(message, default=str).encode() + b"\n")
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
            raise WireError(f"the job sent more than {self.max_bytes} bytes of messages")
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
                    raise WireError("a message line is too long")
                return None
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            self._pending = _parse_header(line)
        need = sum(a["nbytes"] for a in self._pending.get("arrays", []))
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


def _parse_header(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        raise WireError("a message is not valid JSON") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise WireError("a message has no type")
    arrays = message.get("arrays", [])
    if not isinstance(arrays, list):
        raise WireError("a message's arrays are not a list")
    for spec in arrays:
        try:
            ok = (
                isinstance(spec["name"], str)
                and spec["dtype"] in ARRAY_DTYPES
                and all(isinstance(d, int) and d >= 0 for d in spec["shape"])
                and isinstance(spec["nbytes"], int)
                and spec["nbytes"] == int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(spec["dtype"]).itemsize
            )
        except (KeyError, TypeError):
            ok = False
        if not ok:
            raise WireError("a message describes an array badly")
    return message
