"""Turn Python and Numba errors into diagnostics that point at the learner's own file.

A learner should read "line 7: invalid syntax", not a traceback through
Numba's internals. We keep only what happened in their file: the SyntaxError's
position, the innermost traceback frame in their file, or the
`File "submission.py", line N:` blocks that Numba's typing errors carry.
"""

from __future__ import annotations

import os
import re
import traceback

from gpu_worker.protocol import Diagnostic

_NUMBA_LOCATION = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_NUMBA_NOISE = re.compile(
    r"^(Failed in .* mode pipeline.*|During: .*|No implementation of function .* found for signature:)$"
)
_UNDEFINED = re.compile(r"name '(?P<name>\w+)' is not defined")


def _same_file(candidate: str, learner_path: str) -> bool:
    return candidate == learner_path or os.path.basename(candidate) == os.path.basename(learner_path)


def exception_text(exc: BaseException) -> str:
    """`Type: message`, without the traceback."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def learner_line(exc: BaseException, learner_path: str) -> int | None:
    """The innermost line of the learner's file in the exception's traceback."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == learner_path:
            line = frame.lineno
    return line


def from_syntax_error(exc: SyntaxError) -> Diagnostic:
    return Diagnostic(line=exc.lineno, column=exc.offset, message=f"{type(exc).__name__}: {exc.msg}")


def from_exception(exc: BaseException, learner_path: str) -> Diagnostic:
    """A diagnostic for an exception raised while the learner's code ran."""
    if isinstance(exc, SyntaxError) and exc.filename and _same_file(exc.filename, learner_path):
        return from_syntax_error(exc)
    return Diagnostic(line=learner_line(exc, learner_path), message=exception_text(exc))


def _clean_numba_message(text: str) -> str:
    kept = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if _NUMBA_LOCATION.search(line):
            break  # from here on Numba repeats the source; the line number carries that
        if line and not _NUMBA_NOISE.match(line.strip()):
            kept.append(line.strip())
    return " ".join(kept) or text.strip().splitlines()[0]


def from_numba_error(exc: BaseException, learner_path: str, source: str) -> Diagnostic:
    """A diagnostic for a Numba typing or lowering error, at the learner's line where Numba names one."""
    text = str(exc)
    line = None
    for match in _NUMBA_LOCATION.finditer(text):
        if _same_file(match.group("file"), learner_path):
            line = int(match.group("line"))
            break
    if line is None:
        undefined = _UNDEFINED.search(text)
        if undefined:  # Numba names no line for an undefined global; find its first use
            word = re.compile(rf"\b{re.escape(undefined.group('name'))}\b")
            for number, code in enumerate(source.splitlines(), start=1):
                if word.search(code.split("#", 1)[0]):
                    line = number
                    break
    return Diagnostic(line=line, message=f"{type(exc).__name__}: {_clean_numba_message(text)}")
