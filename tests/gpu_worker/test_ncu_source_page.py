"""Nsight Compute's source page read into memory sites and their active lanes, without a GPU.

Two real pages lie in fixtures/ncu (Nsight Compute 2025.3.1 on an H100, 2026-12-07, run 30: the `ncu-lanes`
step's divergence samples, in-warp-branch and branchless-factor, as ncu printed them); the pages written here
follow the format public scripts quote from ncu's own output: the header below is the one an
`ncu --page source --print-source sass --csv` of a 2022-era ncu printed (a `"Kernel Name","..."` row, then
`"Address","Source",...`, "Instructions Executed" twice), cut to the columns that matter and kept in its order.
The columns' meaning is CUPTI's (docs.nvidia.com/cupti/api/structCUpti__ActivityInstructionExecution.html:
`executed` per warp, `notPredOffThreadsExecuted` the threads whose predicate was true).
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

from gpu_worker.measurement import ncu_source
from gpu_worker.measurement.ncu import NcuError

HEADER = (
    "Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed", "# Samples",
    "Instructions Executed", "Thread Instructions Executed", "Predicated-On Thread Instructions Executed",
    "Avg. Threads Executed", "Avg. Predicated-On Threads Executed", "Divergent Branches", "Address Space",
)  # fmt: skip
KERNEL = "two_paths(Array<float, 1, C, mutable, aligned>, Array<float, 1, C, mutable, aligned>)"


def page(rows: list[tuple[str, str, int, int]], kernel: str = KERNEL, header: tuple[str, ...] = HEADER) -> str:
    """A source page: per row (address, SASS, warp executions, predicated-on thread executions), every warp's
    threads active (Thread Instructions Executed = 32 per execution), numbers with thousands separators."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["Kernel Name", kernel])
    writer.writerow(header)
    for address, sass, executed, on in rows:
        cells = {
            "Address": address,
            "Source": f"      {sass} ",
            "Instructions Executed": f"{executed:,}",
            "Thread Instructions Executed": f"{32 * executed:,}",
            "Predicated-On Thread Instructions Executed": f"{on:,}",
            "Address Space": "Global" if "G" in sass.split(" ")[0] else "-",
        }
        writer.writerow([cells.get(name, "0") for name in header])
    return "==PROF== Connected to process 4242\n" + out.getvalue()


WARPS = 16_777_216 // 32  # the divergence lab's largest GPU size, one element a thread
# The in-warp branch: each warp runs both paths, each path's load and store with 16 of its 32 lanes.
IN_WARP_BRANCH = page(
    [
        ("0x7f0000000000", "IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]", WARPS, 32 * WARPS),
        ("0x7f0000000080", "@!P0 LDG.E R2, desc[UR4][R2.64]", WARPS, 16 * WARPS),
        ("0x7f0000000200", "@!P0 STG.E desc[UR4][R4.64], R7", WARPS, 16 * WARPS),
        ("0x7f0000000280", "LDG.E R2, desc[UR4][R2.64]", WARPS, 16 * WARPS),
        ("0x7f0000000400", "STG.E desc[UR4][R4.64], R9", WARPS, 16 * WARPS),
        ("0x7f0000000480", "EXIT", WARPS, 32 * WARPS),
    ]
)
# The reference: even and odd elements in different warps, so each path's instructions run with all 32 lanes
# in half of the warps, and no warp runs the other path's.
ONE_PATH_A_WARP = page(
    [
        ("0x7f0000000080", "LDG.E R2, desc[UR4][R2.64]", WARPS // 2, 32 * WARPS // 2),
        ("0x7f0000000200", "STG.E desc[UR4][R4.64], R7", WARPS // 2, 32 * WARPS // 2),
        ("0x7f0000000280", "LDG.E R2, desc[UR4][R2.64]", WARPS // 2, 32 * WARPS // 2),
        ("0x7f0000000400", "STG.E desc[UR4][R4.64], R9", WARPS // 2, 32 * WARPS // 2),
    ]
)


def sites(text: str, entry: str | None = "two_paths") -> list[dict]:
    return ncu_source.memory_sites(ncu_source.parse_page(text, entry))


def test_each_global_load_and_store_gets_its_active_lanes_per_warp_request():
    found = sites(IN_WARP_BRANCH)
    assert [(s["address"], s["access"], s["space"], s["lanes"]) for s in found] == [
        ("0x7f0000000080", "load", "global", 16),
        ("0x7f0000000200", "store", "global", 16),
        ("0x7f0000000280", "load", "global", 16),
        ("0x7f0000000400", "store", "global", 16),
    ]
    assert found[0]["requests"] == WARPS and found[0]["sass"] == "@!P0 LDG.E R2, desc[UR4][R2.64]"


def test_a_warp_that_runs_one_path_keeps_its_32_lanes():
    assert {s["lanes"] for s in sites(ONE_PATH_A_WARP)} == {32}


def test_the_columns_are_found_by_name_whatever_their_order():
    shuffled = (*reversed(HEADER[2:]), "Source", "Address")
    assert sites(page([("0x10", "LDG.E R2, [R2.64]", 10, 80)], header=shuffled)) == sites(
        page([("0x10", "LDG.E R2, [R2.64]", 10, 80)])
    )


@pytest.mark.parametrize(
    ("sass", "expected"),
    [
        ("@!P0 LDG.E.128.CONSTANT R4, desc[UR6][R2.64]", ("LDG", "global", "load")),
        ("@P1 STG.E.64 desc[UR4][R2.64], R4", ("STG", "global", "store")),
        ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R5", ("RED", "global", "atomic")),
        ("ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R2.64], R7", ("ATOMG", "global", "atomic")),
        ("LD.E R5, [R2.64]", ("LD", "generic", "load")),
        ("@!PT LDS.U R5, [R3+0x80]", ("LDS", "shared", "load")),
        ("STS [R3], R5", ("STS", "shared", "store")),
        ("LDGSTS.E [R3], desc[UR4][R4.64]", ("LDGSTS", "global", "load")),
    ],
)
def test_memory_opcodes_are_told_apart_by_space_and_access(sass, expected):
    (site,) = sites(page([("0x10", sass, 4, 128)]))
    assert (ncu_source.opcode(sass), site["space"], site["access"]) == expected


def test_instructions_that_are_not_memory_accesses_or_never_asked_memory_for_anything_are_left_out():
    text = page(
        [
            ("0x10", "FFMA R5, R5, 0.5, R2", 100, 3200),
            ("0x20", "LDC R1, c[0x0][0x28]", 100, 3200),  # the constant bank: no global request
            ("0x30", "LDL R1, [R1]", 100, 3200),  # local memory: not a site the goal reads
            ("0x40", "@P0 STG.E [R2.64], R5", 0, 0),  # never reached
            ("0x50", "@P0 STG.E [R4.64], R5", 100, 0),  # reached with every lane predicated off
            ("0x60", "STG.E [R6.64], R5", 100, 3200),
        ]
    )
    assert [s["address"] for s in sites(text)] == ["0x60"]


def test_a_page_without_the_predicated_on_column_is_an_error_in_words():
    header = tuple(h for h in HEADER if h != "Predicated-On Thread Instructions Executed")
    with pytest.raises(NcuError) as caught:
        ncu_source.parse_page(page([("0x10", "LDG.E R2, [R2.64]", 10, 80)], header=header))
    assert (
        caught.value.reason == "Nsight Compute's source page has no Predicated-On Thread Instructions Executed column"
    )
    assert "Thread Instructions Executed" in caught.value.detail


def test_a_log_with_no_source_page_is_an_error_in_words():
    with pytest.raises(NcuError, match="printed no source counters"):
        ncu_source.parse_page('==PROF== Disconnected\n"ID","Process ID"\n')


def test_the_kernel_named_like_the_entry_is_read_when_the_page_holds_several():
    other = page([("0x10", "LDG.E R2, [R2.64]", 10, 10)], kernel="fill_inputs(float*)")
    both = other + "\n".join(ONE_PATH_A_WARP.splitlines()[1:])
    assert {s["lanes"] for s in sites(both)} == {32}


def test_unreadable_counts_are_none_not_a_guess():
    text = page([("0x10", "LDG.E R2, [R2.64]", 10, 80)]).replace('"80"', '"-"')
    (instruction,) = ncu_source.parse_page(text)
    assert instruction["predicated_on"] is None
    assert sites(text) == []


def test_the_source_counters_run_asks_for_that_section_alone_into_a_report():
    argv = ncu_source.command("/opt/ncu", "two_paths", "/tmp/w/lanes", "/tmp/w/ncu.log", ["python3", "child"])
    assert argv[argv.index("--section") + 1] == "SourceCounters" and argv.count("--section") == 1
    assert "--metrics" not in argv and "--page" not in argv
    assert argv[argv.index("--export") + 1] == "/tmp/w/lanes" and "--force-overwrite" in argv
    assert argv[argv.index("--kernel-name") + 1] == "regex:two_paths" and argv[-2:] == ["python3", "child"]
    assert ncu_source.import_command("/opt/ncu", "/tmp/w/lanes.ncu-rep") == [
        "/opt/ncu", "--import", "/tmp/w/lanes.ncu-rep", "--page", "source", "--print-source", "sass", "--csv",
    ]  # fmt: skip


def stand_in(tmp_path, body: str) -> str:
    tool = tmp_path / "ncu"
    tool.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
    tool.chmod(0o755)
    return str(tool)


def test_the_page_is_printed_by_ncu_from_its_report(tmp_path):
    report = tmp_path / "lanes.ncu-rep"
    report.write_text(IN_WARP_BRANCH)
    tool = stand_in(tmp_path, "args = sys.argv[1:]\nprint(open(args[args.index('--import') + 1]).read())")
    assert ncu_source.read_page(tool, report).strip() == IN_WARP_BRANCH.strip()


def test_an_ncu_that_cannot_print_the_page_says_so(tmp_path):
    tool = stand_in(tmp_path, "print('==ERROR== Option --print-source is not supported')\nsys.exit(1)")
    with pytest.raises(NcuError) as caught:
        ncu_source.read_page(tool, tmp_path / "lanes.ncu-rep")
    assert caught.value.reason == "Nsight Compute could not print the source counters of its report"
    assert caught.value.detail == "==ERROR== Option --print-source is not supported"


REAL_PAGES = Path(__file__).parent / "fixtures" / "ncu"


def test_a_real_page_of_a_branch_inside_a_warp_reads_16_lanes_at_its_stores():
    page = (REAL_PAGES / "source-page-2025.3.1-h100-divergence-in-warp-branch.csv").read_text()
    sites = ncu_source.memory_sites(ncu_source.parse_page(page, "two_paths"))
    worst = min(sites, key=lambda site: site["lanes"])
    assert worst["lanes"] == 16 and worst["access"] == "store" and worst["sass"].startswith("STG")
    assert {site["lanes"] for site in sites if site["access"] == "load"} == {32.0}


def test_a_real_page_of_a_branchless_kernel_reads_32_lanes_everywhere():
    page = (REAL_PAGES / "source-page-2025.3.1-h100-divergence-branchless.csv").read_text()
    sites = ncu_source.memory_sites(ncu_source.parse_page(page, "two_paths"))
    assert sites and {site["lanes"] for site in sites} == {32.0}
