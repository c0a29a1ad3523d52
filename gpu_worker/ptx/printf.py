"""CUDA's device `printf` (a `vprintf` call) on the executor: the format string and its argument buffer, formatted.

`vprintf(format, args)` gets a pointer to the format string and one to a buffer holding the arguments,
each aligned to its size: `int` 4 bytes, `long` and pointers 8, floats promoted to `double` (8). The
format is the learner's data: it is read up to a bound, each conversion is rebuilt from a small
grammar (flags, a width and precision of at most `MAX_WIDTH`, a length, one conversion) and formatted
with Python's `%` on the value read, so nothing in it can do more than print. What one launch prints
is bounded by `MAX_LINES` and `MAX_BYTES`.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

MAX_FORMAT = 1024
MAX_WIDTH = 64
MAX_LINES = 2000
MAX_BYTES = 64 << 10
_SPEC = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>\d*)(?:\.(?P<precision>\d*))?"
    r"(?P<length>hh|h|ll|l|z|j|t|L)?(?P<conv>[diouxXeEfFgGaAcsp%])"
)

Read = Callable[[int, int], bytes]  # (offset, size) -> bytes of the argument buffer
ReadString = Callable[[int], bytes]  # a generic address -> the bytes of a NUL-terminated string


def format_printf(fmt: bytes, read: Read, read_string: ReadString) -> tuple[str, int]:
    """(the text, the number of arguments used) of one thread's printf."""
    text = fmt.split(b"\0", 1)[0][:MAX_FORMAT].decode(errors="replace")
    out: list[str] = []
    offset, used, position = 0, 0, 0
    for match in _SPEC.finditer(text):
        out.append(text[position : match.start()])
        position = match.end()
        conv, length = match["conv"], match["length"] or ""
        if conv == "%":
            out.append("%")
            continue
        wide = length in ("l", "ll", "z", "j", "t") or conv in "p"
        size = 8 if wide or conv in "eEfFgGaAsp" else 4
        offset = -(-offset // size) * size
        raw = read(offset, size)
        offset += size
        used += 1
        width = min(int(match["width"] or 0), MAX_WIDTH)
        precision = "" if match["precision"] is None else f".{min(int(match['precision'] or 0), MAX_WIDTH)}"
        spec = f"%{match['flags']}{width or ''}{precision}"
        out.append(_one(spec, conv, raw, read_string))
    out.append(text[position:])
    return "".join(out), used


def _one(spec: str, conv: str, raw: bytes, read_string: ReadString) -> str:
    if conv in "eEfFgGaA":
        value = struct.unpack("<d", raw)[0]
        return (spec + ("e" if conv in "aA" else conv)) % value
    if conv == "s":
        address = struct.unpack("<Q", raw)[0]
        return (spec + "s") % read_string(address).decode(errors="replace")
    if conv == "p":
        return f"0x{struct.unpack('<Q', raw)[0]:x}"
    unsigned = int.from_bytes(raw, "little", signed=False)
    if conv == "c":
        return (spec + "c") % chr(unsigned & 0xFF)
    if conv in "di":
        return (spec + "d") % int.from_bytes(raw, "little", signed=True)
    return (spec + ("d" if conv == "u" else conv)) % unsigned


class Printed:
    """What a launch printed, bounded; `lines` in the order the threads printed them."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.lines) >= MAX_LINES or self.size + len(text) > MAX_BYTES:
            self.dropped += 1
            return
        self.lines.append(text)
        self.size += len(text)

    def text(self) -> str:
        tail = f"... ({self.dropped} more printf calls not shown)\n" if self.dropped else ""
        return "".join(self.lines) + tail
