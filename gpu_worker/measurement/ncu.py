"""Nsight Compute (`ncu`) on the cuda backend: find it, build its command line, read its CSV in plain words.

The learner's kernel runs once under::

    ncu --clock-control none --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis
        --metrics <METRICS> --csv --page raw --print-units base
        --kernel-name-base demangled --kernel-name regex:<entry> --launch-count 1
        --target-processes application-only --log-file <log> <target...>

`--clock-control none` leaves the clocks as the timing saw them (ncu would
otherwise lock them to base). `--page raw --csv` prints one header row of
metric names, one row of units and one row per profiled kernel;
`--print-units base` keeps the units unscaled (bytes, nanoseconds), and the
parser still accepts scaled ones and thousands separators. Numba mangles its
kernels' names (`_ZN...10vector_addB2v1...`), so the kernel is matched by a
regular expression on its demangled name, which contains the entry as written.

Metric names were checked against the section and rule files NVIDIA ships with
Nsight Compute (Occupancy.section, SpeedOfLight.section,
MemoryWorkloadAnalysis*.section, SharedMemoryConflicts.py): achieved occupancy
is `sm__warps_active.avg.pct_of_peak_sustained_active`, shared-memory ways are
wavefronts over `smsp__sass_inst_executed_op_shared_*` instructions as NVIDIA's
own rule computes them. DRAM throughput is asked of no name: its name changed
(`dram__throughput...` in older releases, `gpu__dram_throughput...` in 2025's
SpeedOfLight for sm_90), so the SpeedOfLight section collects whichever this
release knows and `summarize` reads either.

`summarize` turns one profiled kernel into a plain dict (no pydantic: the
engine stores it as it is) with a sentence per fact; `excess_traffic` puts the
DRAM bytes over the exercise's declared, compulsory bytes as the traffic goal
does (`goals.traffic_ratio`) and says when they stray from them. Failures are `NcuError`s whose `reason` is a
sentence for the learner.
"""

from __future__ import annotations

import csv
import functools
import glob
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpu_worker.exercise.goals import traffic_ratio

NCU_ENV = "WARPLAB_NCU"  # the ncu binary, when it is neither on PATH nor in a usual install folder
KEEP_ENV = "WARPLAB_NCU_KEEP"  # a folder: each raw log is copied there (to bring a real one back as a fixture)
SECTIONS = ("SpeedOfLight", "Occupancy", "MemoryWorkloadAnalysis")
# The counters of the memory-access goals (check-labs --ncu-goals, alone there): global sectors and requests
# (sectors per request, and the traffic ratio from the sectors), shared wavefronts, instructions and bank
# conflicts. Asked without sections, ncu replays the kernel a few times
# instead of the sections' dozens.
GOAL_METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
)
METRICS = (
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct",
    *GOAL_METRICS,
    "gpu__time_duration.sum",
)
DRAM_THROUGHPUT = (
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
)
SECTOR_BYTES = 32
EXCESS_LIMIT = 0.10  # a DRAM traffic this far from the declared bytes is told to the learner
IDENTITY_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream")
_UNIT_SCALE = {
    "": 1.0,
    "%": 1.0,
    "byte": 1.0,
    "Kbyte": 1e3,
    "Mbyte": 1e6,
    "Gbyte": 1e9,
    "Tbyte": 1e12,
    "nsecond": 1.0,
    "ns": 1.0,
    "usecond": 1e3,
    "us": 1e3,
    "msecond": 1e6,
    "ms": 1e6,
    "second": 1e9,
    "s": 1e9,
}
_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_ERRORS = (  # (what ncu says, what the learner is told)
    ("ERR_NVGPUCTRPERM", "profiling is not allowed on this slice (the driver keeps the GPU's counters for admins)"),
    ("not supported on this device", "profiling is not supported on this slice"),
    ("Profiling is not supported", "profiling is not supported on this slice"),
    ("driver resource was unavailable", "another profiler was using this GPU's counters"),
    ("ERR_NVGPUCTRBUSY", "another profiler was using this GPU's counters"),
    ("Failed to find metric", "this Nsight Compute does not know a metric the worker asks for"),
)


class NcuError(Exception):
    """Nsight Compute could not profile the kernel; `reason` is a sentence for the learner, `detail` ncu's words."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def find_ncu() -> str | None:
    """`WARPLAB_NCU`, else ncu on PATH, else the toolkit's or a standalone install's newest copy."""
    chosen = os.environ.get(NCU_ENV)
    if chosen:
        return real_ncu(chosen) if os.access(chosen, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return real_ncu(found)
    for pattern in ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu"):
        matches = sorted(glob.glob(pattern), reverse=True)
        if matches and os.access(matches[0], os.X_OK):
            return real_ncu(matches[0])
    return None


def real_ncu(ncu: str) -> str:
    """The Nsight Compute install's own `ncu`, where `ncu` is the toolkit's `bin/ncu` launcher.

    That launcher is a shell script that looks for `nsight-compute*` beside the
    toolkit (often a link into /opt/nvidia) or under /opt/nvidia and runs the
    `ncu` there; inside the sandbox that lookup fails unless the folder it finds
    is bound too. Running the install's own ncu, with its real folder bound,
    needs no lookup.
    """
    real = Path(os.path.realpath(ncu))
    if real.parent.name != "bin":
        return str(real)
    for pattern in (str(real.parent.parent / "nsight-compute*" / "ncu"), "/opt/nvidia/nsight-compute/*/ncu"):
        for match in sorted(glob.glob(pattern), reverse=True):
            if os.access(match, os.X_OK):
                return os.path.realpath(match)
    return str(real)


def install_dir(ncu: str) -> Path:
    """The folder ncu runs from (its sections, rules and target libraries sit beside it), for the sandbox."""
    real = Path(os.path.realpath(ncu)).parent
    return real.parent if real.name == "bin" else real


@functools.cache
def version(ncu: str) -> str:
    """The release ncu reports (`Version 2025.1.0.0 (build ...)` -> "2025.1.0.0"), or "" when it says none."""
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    match = re.search(r"Version\s+(\S+)", out)
    return match.group(1) if match else ""


def kernel_regex(entry: str) -> str:
    """A regular expression for the kernel's demangled name (Numba's mangled names contain the entry)."""
    return "regex:" + re.escape(entry)


def command(
    ncu: str,
    entry: str,
    log_file: str | os.PathLike[str],
    target: Sequence[str] = (),
    *,
    sections: Sequence[str] = SECTIONS,
    metrics: Sequence[str] = METRICS,
    launch_count: int = 1,
) -> list[str]:
    """The ncu command line that profiles `entry` once and writes its raw CSV to `log_file`, then `target`."""
    argv = [ncu, "--clock-control", "none"]
    for section in sections:
        argv += ["--section", section]
    if metrics:
        argv += ["--metrics", ",".join(metrics)]
    argv += ["--csv", "--page", "raw", "--print-units", "base"]
    argv += ["--kernel-name-base", "demangled", "--kernel-name", kernel_regex(entry)]
    argv += ["--launch-count", str(launch_count), "--target-processes", "application-only"]
    argv += ["--log-file", os.fspath(log_file)]
    return argv + list(target)


def check_errors(log: str) -> None:
    """Raise `NcuError` for the first `==ERROR==` in ncu's log (or no profiled kernel), in the learner's words."""
    errors = [line.strip() for line in log.splitlines() if line.startswith("==ERROR==")]
    for needle, reason in _ERRORS:
        hit = next((e for e in errors if needle in e), None)
        if hit is not None:
            raise NcuError(reason, hit)
    if any("No kernels were profiled" in line for line in log.splitlines()):
        raise NcuError("Nsight Compute saw no launch of your kernel", "No kernels were profiled")
    if errors:
        raise NcuError(f"Nsight Compute failed: {errors[0].removeprefix('==ERROR==').strip()}"[:300], errors[0])


def parse_csv(log: str) -> list[dict[str, Any]]:
    """The profiled kernels of a `--csv --page raw` log: per row, the identity columns and {metric: (value, unit)}.

    ncu's own `==PROF==` lines and anything the program printed are skipped:
    the CSV rows are the lines that start with a quote.
    """
    rows = list(csv.reader(line for line in log.splitlines() if line.startswith('"')))
    header_at = next((i for i, r in enumerate(rows) if r[:2] == ["ID", "Process ID"]), None)
    if header_at is None:
        raise NcuError("Nsight Compute wrote no results", "no CSV header in the log")
    header, body = rows[header_at], rows[header_at + 1 :]
    units = [""] * len(header)
    if body and not body[0][0].strip():  # the units row: its identity columns are empty
        units, body = body[0] + [""] * (len(header) - len(body[0])), body[1:]
    kernels = []
    for row in body:
        if len(row) != len(header) or row[:2] == ["ID", "Process ID"]:
            continue
        cells = dict(zip(header, row, strict=True))
        metrics = {
            name: (value, unit)
            for name, value, unit in zip(header, row, units, strict=True)
            if "__" in name  # metric names: unit__counter...; the rest describe the launch
        }
        kernels.append({**{k: cells.get(k, "") for k in IDENTITY_COLUMNS}, **_launch(cells), "metrics": metrics})
    if not kernels:
        raise NcuError("Nsight Compute saw no launch of your kernel", "the CSV has no kernel rows")
    return kernels


def _launch(cells: dict[str, str]) -> dict[str, str]:
    return {k: cells[k] for k in ("Block Size", "Grid Size", "Device", "CC") if k in cells}


def number(value: str, unit: str = "") -> float | None:
    """A CSV cell as a float in base units: thousands separators dropped, scaled units undone; None for n/a."""
    text = value.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan", "-"):
        return None
    try:
        found = float(text)
    except ValueError:
        return None
    scale = _UNIT_SCALE.get(unit)
    if scale is None:  # e.g. "Ksector", "Mrequest", "Ginst": a decimal prefix on a count
        scale = _PREFIX.get(unit[:1], 1.0) if len(unit) > 1 and unit[1:2].islower() else 1.0
    return found * scale


def summarize(kernel: dict[str, Any]) -> dict[str, Any]:
    """One profiled kernel (from `parse_csv`) as the facts the learner sees, each explained in a sentence."""
    metrics = kernel["metrics"]
    values = {name: number(v, u) for name, (v, u) in metrics.items()}

    def get(name: str) -> float | None:
        return values.get(name)

    def ratio(top: str, bottom: str) -> float | None:
        a, b = get(top), get(bottom)
        return round(a / b, 2) if a is not None and b else None

    read, write = get("dram__bytes_read.sum"), get("dram__bytes_write.sum")
    sectors = _sum(
        get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    )
    throughput = next((get(n) for n in DRAM_THROUGHPUT if get(n) is not None), None)
    facts: dict[str, Any] = {
        "available": True,
        "kernel": kernel.get("Kernel Name", ""),
        "achieved_occupancy": get("sm__warps_active.avg.pct_of_peak_sustained_active"),
        "theoretical_occupancy": get("sm__maximum_warps_per_active_cycle_pct"),
        "dram_bytes": None if read is None and write is None else (read or 0.0) + (write or 0.0),
        "dram_read_bytes": read,
        "dram_write_bytes": write,
        "dram_throughput_pct": throughput,
        "l1_hit_rate": get("l1tex__t_sector_hit_rate.pct"),
        "l2_hit_rate": get("lts__t_sector_hit_rate.pct"),
        # What the warps' global loads and stores asked the L1 for, whole sectors, before any cache answers.
        "global_requested_bytes": None if sectors is None else SECTOR_BYTES * sectors,
        "global_load_sectors_per_request": ratio(
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
        ),
        "global_store_sectors_per_request": ratio(
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
        ),
        "shared_load_ways": ratio(
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smsp__sass_inst_executed_op_shared_ld.sum"
        ),
        "shared_store_ways": ratio(
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__sass_inst_executed_op_shared_st.sum"
        ),
        "shared_bank_conflicts": _sum(
            get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
            get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
        ),
        "duration_ns": get("gpu__time_duration.sum"),
        "grid": kernel.get("Grid Size", ""),
        "block": kernel.get("Block Size", ""),
    }
    facts["explanations"] = explanations(facts)
    wanted = (*METRICS, *DRAM_THROUGHPUT)
    facts["raw"] = {name: values[name] for name in wanted if name in values}
    return facts


def _sum(*parts: float | None) -> float | None:
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


def _pct(value: float) -> str:
    return f"{value:.0f}%" if value >= 10 else f"{value:.1f}%"


def _mb(nbytes: float) -> str:
    return f"{nbytes / 1e6:,.1f} MB" if nbytes < 1e10 else f"{nbytes / 1e9:,.1f} GB"


def explanations(facts: dict[str, Any]) -> list[str]:
    """A plain sentence for each fact that was measured."""
    said = []
    achieved, theoretical = facts.get("achieved_occupancy"), facts.get("theoretical_occupancy")
    if achieved is not None:
        text = f"Achieved occupancy {_pct(achieved)}: on average that share of each SM's warp slots held a warp"
        if theoretical:
            text += f", of the {_pct(theoretical)} this launch allows (theoretical occupancy)"
            if theoretical - achieved > 10:
                text += "; the gap means warps ended unevenly or too few blocks were left to fill the SMs"
        said.append(text + ".")
    if facts.get("dram_bytes") is not None:
        text = f"The kernel moved {_mb(facts['dram_bytes'])} to and from the GPU's memory (DRAM)"
        if facts.get("dram_throughput_pct") is not None:
            text += f", at {_pct(facts['dram_throughput_pct'])} of its peak throughput"
        said.append(text + ".")
    l1, l2 = facts.get("l1_hit_rate"), facts.get("l2_hit_rate")
    if l1 is not None and l2 is not None:
        said.append(
            f"{_pct(l1)} of the L1 cache's sector lookups and {_pct(l2)} of the L2's hit: the rest went one level "
            "further out (a kernel that reads each byte once hits little, and that is fine)."
        )
    for access in ("load", "store"):
        spr = facts.get(f"global_{access}_sectors_per_request")
        if spr is None:
            continue
        text = f"Each warp's global {access} touched {spr:g} sectors of 32 bytes on average"
        if spr > 4.5:
            text += "; 32 threads reading consecutive 4-byte values need only 4: neighbouring threads should touch "
            text += "neighbouring addresses"
        said.append(text + ".")
    for access in ("load", "store"):
        ways = facts.get(f"shared_{access}_ways")
        if ways is None:
            continue
        if ways <= 1.05:
            said.append(f"Shared-memory {access}s had no bank conflicts (one pass per warp instruction).")
        else:
            said.append(
                f"Shared-memory {access}s took {ways:g} passes per warp instruction: {ways:g}-way bank conflicts, "
                "threads of a warp asking one of the 32 banks for different words."
            )
    return said


def _times(ratio: float) -> str:
    return f"{ratio:.2g}x" if ratio < 10 else f"{ratio:,.0f}x"


def excess_traffic(dram_bytes: float | None, declared_bytes: float | None) -> str | None:
    """A sentence when the measured DRAM bytes differ from the exercise's compulsory bytes by more than 10%."""
    ratio = traffic_ratio(dram_bytes, declared_bytes)
    if ratio is None or dram_bytes is None or declared_bytes is None:
        return None
    if ratio > 1 + EXCESS_LIMIT:
        return (
            f"Your kernel moved {_times(ratio)} the bytes it must ({_mb(dram_bytes)} measured, {_mb(declared_bytes)} "
            "compulsory): excess traffic, from reading or writing the same data more than once or from scattered "
            "accesses that fetch whole 32-byte sectors for a few bytes each."
        )
    if ratio < 1 - EXCESS_LIMIT:
        return (
            f"Your kernel moved only {_times(ratio)} the compulsory bytes ({_mb(dram_bytes)} measured, "
            f"{_mb(declared_bytes)} declared): part of the data stayed in the L2 cache, or part of the work "
            "was not done."
        )
    return None


def parse_log(log: str, entry: str | None = None) -> dict[str, Any]:
    """ncu's log (a `--csv --page raw` run) to `summarize`'s facts for the kernel named like `entry`."""
    check_errors(log)
    kernels = parse_csv(log)
    if entry:
        named = [k for k in kernels if re.search(re.escape(entry), k.get("Kernel Name", ""))]
        kernels = named or kernels
    return summarize(kernels[0])


def keep_copy(log_path: str | os.PathLike[str], label: str) -> None:
    """Copy a raw log to `WARPLAB_NCU_KEEP` (a debugging aid: real CSVs to replace the hand-written fixture)."""
    folder = os.environ.get(KEEP_ENV)
    if not folder or not os.path.exists(log_path):
        return
    os.makedirs(folder, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", label) or "ncu"
    shutil.copyfile(log_path, os.path.join(folder, f"{safe}.csv"))
