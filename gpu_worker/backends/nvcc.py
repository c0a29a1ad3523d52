"""Compile CUDA C++ with nvcc and turn its messages into diagnostics in the learner's file.

nvcc's front end reports `submission.cu(5): error: expected a ";"` followed by
the offending source line and a caret; its preprocessor (the host compiler)
reports `submission.cu:1:10: fatal error: ...`. Both echo source lines, and an
`#include` of a host file would echo that file. So only the message of a
diagnostic is kept, never the echoed text, and diagnostics located in a file
that is neither the learner's nor a toolkit or system header are reduced to
"an error in an included file", without their message. (The compile also runs
in the sandbox, where host files such as /etc/passwd are not there at all.)
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Literal

from gpu_worker.backends import toolkit
from gpu_worker.protocol import Diagnostic

SOURCE_NAME = "submission.cu"
_EDG = re.compile(
    r"^(?P<file>[^\s()][^()]*)\((?P<line>\d+)\): "
    r"(?P<severity>error|warning|catastrophic error)(?: #[\w-]+)?: (?P<msg>.*)$"
)
_GCC = re.compile(
    r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<severity>fatal error|error|warning): (?P<msg>.*)$"
)
_NVCC_FATAL = re.compile(r"^nvcc (?:fatal|error)\s*: (?P<msg>.*)$")
_PUBLIC_HEADERS = ("/usr/include/", "/usr/local/cuda", "/usr/lib/gcc/", "/opt/cuda")
_EXPECTED = re.compile(r'^expected an? (?:"[^"]+"|\w+)')


def find_nvcc() -> str | None:
    return toolkit.find_tool("nvcc")


def version() -> str:
    return toolkit.release("nvcc")


def _is_learner_file(path: str) -> bool:
    return os.path.basename(path) == SOURCE_NAME


def _caret_column(lines: list[str], index: int) -> int | None:
    """nvcc prints the source line indented by two spaces, then a caret line under it."""
    if index + 2 < len(lines):
        caret = lines[index + 2]
        if caret.strip() == "^":
            return max(caret.index("^") - 2, 0) + 1
    return None


def _move_to_previous_token(
    source_lines: list[str], line: int, column: int | None, message: str
) -> tuple[int, int | None]:
    """EDG reports a missing ';' at the next token; when that starts a line, the mistake is on the line before."""
    if not _EXPECTED.match(message) or not 1 <= line <= len(source_lines):
        return line, column
    text = source_lines[line - 1]
    first = len(text) - len(text.lstrip()) + 1
    if column is not None and column != first:
        return line, column
    for previous in range(line - 1, 0, -1):
        code = source_lines[previous - 1].split("//", 1)[0].rstrip()
        if code:
            return previous, len(code) + 1
    return line, column


def _include_line(source_lines: list[str], path: str) -> int | None:
    name = os.path.basename(path)
    for number, text in enumerate(source_lines, start=1):
        if text.lstrip().startswith("#") and "include" in text and name in text:
            return number
    return None


def parse_diagnostics(text: str, source: str) -> list[Diagnostic]:
    """Diagnostics from nvcc's output, positioned in the learner's file, echoed source dropped."""
    source_lines = source.splitlines()
    lines = text.splitlines()
    diagnostics: list[Diagnostic] = []
    hidden_include = False
    for i, raw in enumerate(lines):
        line = raw.rstrip()
        m = _EDG.match(line) or _GCC.match(line)
        if m is None:
            fatal = _NVCC_FATAL.match(line)
            if fatal:
                diagnostics.append(Diagnostic(message=f"nvcc: {fatal['msg']}"))
            continue
        severity: Literal["error", "warning"] = "warning" if m["severity"] == "warning" else "error"
        path = m["file"]
        if not _is_learner_file(path):
            if path.startswith(_PUBLIC_HEADERS):
                diagnostics.append(Diagnostic(severity=severity, message=f"{path}:{m['line']}: {m['msg']}"))
            elif not hidden_include and severity == "error":
                hidden_include = True
                diagnostics.append(
                    Diagnostic(
                        line=_include_line(source_lines, path),
                        message="an error in an included file (its text is not shown); include only CUDA headers",
                    )
                )
            continue
        number = int(m["line"])
        column = int(m["col"]) if m.groupdict().get("col") else _caret_column(lines, i)
        number, column = _move_to_previous_token(source_lines, number, column, m["msg"])
        diagnostics.append(Diagnostic(line=number, column=column, severity=severity, message=m["msg"]))
    return diagnostics


LOG_BYTES = 1 << 20  # what is read of nvcc's messages, like the cap on a program's output


def compile_ptx(
    source: str, workdir: Path, arch: str = "sm_90", timeout: float = 120
) -> tuple[str | None, list[Diagnostic]]:
    """Compile the learner's source to PTX; (ptx, diagnostics), ptx None when compilation failed.

    Raises FileNotFoundError when nvcc is missing.
    """
    tool = find_nvcc()
    if tool is None:
        raise FileNotFoundError("nvcc is not installed on this worker")
    src = workdir / SOURCE_NAME
    src.write_text(source)
    out = workdir / "submission.ptx"
    log = workdir / "nvcc.log"  # a file, read only up to LOG_BYTES: a source can make nvcc print gigabytes
    with log.open("wb") as sink:
        proc = subprocess.run(
            [tool, "-ptx", f"-arch={arch}", "-lineinfo", "-std=c++17", SOURCE_NAME, "-o", out.name],
            cwd=workdir,
            stdout=sink,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    with log.open("rb") as printed:
        text = printed.read(LOG_BYTES).decode(errors="replace")
    log.unlink()
    diagnostics = parse_diagnostics(text, source)
    if proc.returncode != 0:
        if not any(d.severity == "error" for d in diagnostics):
            diagnostics.append(Diagnostic(message=f"nvcc failed (exit status {proc.returncode})"))
        return None, diagnostics
    return out.read_text(), diagnostics
