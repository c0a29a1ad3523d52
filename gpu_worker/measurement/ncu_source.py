"""Nsight Compute's source page: each memory instruction's active lanes, from its per-instruction SASS counters.

`lanes_per_request` (the worst memory site's active lanes per warp request) has no kernel-wide ncu counter: the
SASS thread counters come by instruction class, not by memory space (run 28, call 4). The source page has them
per instruction instead. The learner's kernel runs once more, on its own, under::

    ncu --clock-control none --section SourceCounters
        --kernel-name-base demangled --kernel-name regex:<entry> --launch-count 1
        --target-processes application-only --export <folder>/lanes --force-overwrite --log-file <log> <target...>

and the report is printed on the worker, outside the sandbox, with::

    ncu --import <folder>/lanes.ncu-rep --page source --print-source sass --csv

It is a second ncu run, apart from the counters' (`ncu.command`): a section or page this ncu does not know fails
this run alone, never the other goals' figures.

The page's CSV (as public scripts read it from ncu 2022.2 to 2025.x; NVIDIA's own CLI manual could not be read
here, see the tests) is a `"Kernel Name","<name>"` row, then one header row (`"Address","Source",...`) and a
row per SASS instruction. Columns are found by header name, the first of a repeated name winning (2022's page
printed "Instructions Executed" twice, with one value). Per instruction:

- "Instructions Executed": warp-level executions (CUPTI's `executed`);
- "Predicated-On Thread Instructions Executed": threads that ran it with their predicate true (CUPTI's
  `notPredOffThreadsExecuted`); their ratio is the instruction's active lanes per warp request, the quantity
  the CPU tier counts per line (a predicated-off lane of a guarded load asks memory for nothing).

`memory_sites` keeps the executed load, store and atomic instructions (their SASS opcodes in `OPCODES`), each
with its space and access as the CPU tier names them. Failures are `ncu.NcuError`s with a sentence for the
learner.

Where the two tiers can differ: SASS is not the PTX the CPU tier runs (ptxas may merge two branches' stores into
one after the branch, which then runs with every lane), and a warp that runs an instruction with every lane
predicated off counts among its executions while it asks memory for nothing (an if-converted branch reads fewer
lanes here). bench/device_session.sh's `ncu-lanes` step prints both tiers' figures side by side.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
from collections.abc import Sequence
from typing import Any

from gpu_worker.measurement.ncu import NcuError, kernel_regex, number

SECTION = "SourceCounters"
EXECUTED = "Instructions Executed"
PREDICATED_ON = "Predicated-On Thread Instructions Executed"
THREADS = "Thread Instructions Executed"  # kept beside the figure: it counts predicated-off lanes too
IMPORT_SECONDS = 60.0
MAX_PAGE_BYTES = 32 * 1024 * 1024  # a learner's kernel is a few hundred instructions; a page past this is not one
MAX_SITES = 200
# SASS opcode (before its first dot) -> (space, access), the access named as the CPU tier names it. A generic
# LD/ST/ATOM may reach any space; the labs' kernels take global arrays, and the goal counts generic as global
# (`gpu_worker.exercise.profiled_goals`).
OPCODES: dict[str, tuple[str, str]] = {
    "LDG": ("global", "load"),
    "LDGSTS": ("global", "load"),  # an asynchronous copy: it reads global memory (and writes shared)
    "STG": ("global", "store"),
    "ATOMG": ("global", "atomic"),
    "RED": ("global", "atomic"),
    "REDG": ("global", "atomic"),
    "LD": ("generic", "load"),
    "ST": ("generic", "store"),
    "ATOM": ("generic", "atomic"),
    "LDS": ("shared", "load"),
    "LDSM": ("shared", "load"),
    "STS": ("shared", "store"),
    "ATOMS": ("shared", "atomic"),
}
_PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")


def command(
    ncu: str, entry: str, report: str | os.PathLike[str], log_file: str | os.PathLike[str], target: Sequence[str] = ()
) -> list[str]:
    """The ncu command line that profiles `entry` once with the SourceCounters section into `report`, then `target`.

    `report` has no extension: ncu adds `.ncu-rep`.
    """
    argv = [ncu, "--clock-control", "none", "--section", SECTION]
    argv += ["--kernel-name-base", "demangled", "--kernel-name", kernel_regex(entry)]
    argv += ["--launch-count", "1", "--target-processes", "application-only"]
    argv += ["--export", os.fspath(report), "--force-overwrite", "--log-file", os.fspath(log_file)]
    return argv + list(target)


def import_command(ncu: str, report: str | os.PathLike[str]) -> list[str]:
    """The ncu command line that prints a report's source page, SASS only, as CSV."""
    return [ncu, "--import", os.fspath(report), "--page", "source", "--print-source", "sass", "--csv"]


def read_page(ncu: str, report: str | os.PathLike[str]) -> str:
    """The report's source page as ncu prints it (`import_command`); `NcuError` when ncu cannot print it."""
    try:
        done = subprocess.run(import_command(ncu, report), capture_output=True, timeout=IMPORT_SECONDS, check=False)
    except subprocess.TimeoutExpired as exc:
        raise NcuError("Nsight Compute took too long to print the source counters", str(exc)) from exc
    out = done.stdout[:MAX_PAGE_BYTES].decode(errors="replace")
    errors = [line for line in (out + done.stderr.decode(errors="replace")).splitlines() if "==ERROR==" in line]
    if done.returncode != 0 or errors:
        detail = (errors or [done.stderr.decode(errors="replace").strip()[-300:]])[0]
        raise NcuError("Nsight Compute could not print the source counters of its report", detail)
    return out


def _header_at(rows: list[list[str]]) -> int:
    for i, row in enumerate(rows):
        if "Source" in row and EXECUTED in row:
            return i
    raise NcuError("Nsight Compute printed no source counters", "no header row with Source and Instructions Executed")


def _kernel_rows(rows: list[list[str]], entry: str | None) -> list[list[str]]:
    """The rows of the kernel named like `entry` (a page can hold several kernels, each after its name), else all."""
    blocks: list[tuple[str, list[list[str]]]] = [("", [])]
    for row in rows:
        if row[:1] == ["Kernel Name"]:
            blocks.append((row[1] if len(row) > 1 else "", []))
        else:
            blocks[-1][1].append(row)
    named = [body for name, body in blocks if entry and re.search(re.escape(entry), name)]
    return named[0] if named else [row for _, body in blocks for row in body]


def opcode(sass: str) -> str:
    """The instruction's opcode without its guard predicate or modifiers: "@!P0 LDG.E.128 R4, ..." -> "LDG"."""
    text = _PREDICATE.sub("", sass.strip())
    return text.split(" ", 1)[0].split(".", 1)[0].upper()


def parse_page(text: str, entry: str | None = None) -> list[dict[str, Any]]:
    """Every SASS instruction of the page: address, text, opcode and its three execution counts (None: n/a).

    Raises `NcuError` when the page has no header or lacks a column the figure needs.
    """
    rows = [r for r in csv.reader(line for line in text.splitlines() if line.startswith('"')) if r]
    rows = _kernel_rows(rows, entry)
    at = _header_at(rows)
    header = rows[at]
    if PREDICATED_ON not in header:
        raise NcuError(
            f"Nsight Compute's source page has no {PREDICATED_ON} column", f"columns: {', '.join(header)[:300]}"
        )
    column = {name: header.index(name) for name in header}  # index(): the first of a repeated name

    def cell(row: list[str], name: str) -> str:
        i = column.get(name)
        return row[i] if i is not None and i < len(row) else ""

    out = []
    for row in rows[at + 1 :]:
        if row == header:
            continue
        sass = cell(row, "Source").strip()
        if not sass:
            continue
        out.append(
            {
                "address": cell(row, "Address").strip(),
                "sass": sass,
                "opcode": opcode(sass),
                "executed": number(cell(row, EXECUTED)),
                "threads": number(cell(row, THREADS)),
                "predicated_on": number(cell(row, PREDICATED_ON)),
            }
        )
    return out


def memory_sites(instructions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The memory instructions that ran: space, access, warp requests and active lanes per request, by address."""
    sites = []
    for ins in instructions:
        kind = OPCODES.get(ins["opcode"])
        executed, on = ins["executed"], ins["predicated_on"]
        if kind is None or not executed or not on:  # never run, or run with every lane off: no request
            continue
        space, access = kind
        sites.append(
            {
                "address": ins["address"],
                "sass": ins["sass"][:120],
                "space": space,
                "access": access,
                "requests": int(executed),
                "lanes": round(on / executed, 2),
            }
        )
    return sites[:MAX_SITES]
