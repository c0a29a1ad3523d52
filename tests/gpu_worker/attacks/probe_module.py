"""One learner module that tries many attacks at import time and prints what each one got.

Each probe is a function body. A probe that is stopped raises (an OSError, a
PermissionError...) and is reported as `blocked: ...`; one that gets through
returns what it got, reported as `got: ...`. The module ends with a correct
kernel, so the job itself is accepted and its output carries every report.
"""

from __future__ import annotations

import textwrap

PRELUDE = """
import ctypes, errno, json, os, platform, signal, socket, subprocess, threading, time
from numba import cuda

libc = ctypes.CDLL(None, use_errno=True)
NR = {
    "x86_64": {"io_uring_setup": 425, "bpf": 321, "perf_event_open": 298, "keyctl": 250, "add_key": 248,
               "userfaultfd": 323, "process_vm_readv": 310, "setns": 308, "pivot_root": 155, "clone": 56,
               "kexec_load": 246, "init_module": 175},
    "aarch64": {"io_uring_setup": 425, "bpf": 280, "perf_event_open": 241, "keyctl": 219, "add_key": 217,
                "userfaultfd": 282, "process_vm_readv": 270, "setns": 268, "pivot_root": 41, "clone": 220,
                "kexec_load": 104, "init_module": 105},
}[platform.machine()]


def check(result):
    if result == -1:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))
    return result


def sc(name, *args):
    return check(libc.syscall(NR[name], *[ctypes.c_long(a) if isinstance(a, int) else a for a in args]))


REPORT = {}


def probe(name):
    def run(fn):
        try:
            REPORT[name] = "got: " + json.dumps(fn(), default=str)
        except BaseException as exc:
            REPORT[name] = f"blocked: {type(exc).__name__}: {exc}"
    return run
"""
PRINT_REPORT = """
print("REPORT " + json.dumps(REPORT))
"""
# On the GPU the module is imported only in the compile process, whose printed output the engine discards:
# the report comes back as the import's error, in the verdict's message.
RAISE_REPORT = """
raise SystemExit("REPORT " + json.dumps(REPORT))
"""
KERNEL = """


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


def module(probes: list[tuple[str, str]], *, raise_report: bool = False, **values: object) -> str:
    """The learner's module running `probes` (name, body), with `{NAME}` in bodies replaced by `values`.

    It prints its report, or with `raise_report` ends its import with it (`SystemExit`: a runtime error).
    """
    parts = [PRELUDE]
    for name, body in probes:
        for key, value in values.items():
            body = body.replace("{" + key + "}", str(value))
        parts.append(f"@probe({name!r})\ndef _():\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))
    parts += [RAISE_REPORT if raise_report else PRINT_REPORT, KERNEL]
    return "\n\n".join(parts)


def report(text: str) -> dict[str, str]:
    """The report in a job's output or message: the JSON object after `REPORT `."""
    import json

    at = text.index("REPORT ") + len("REPORT ")
    return json.JSONDecoder().raw_decode(text[at:])[0]
