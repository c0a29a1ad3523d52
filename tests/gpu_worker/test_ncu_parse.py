"""Nsight Compute's CSV read into plain facts, its errors into sentences, and excess DRAM traffic told."""

from __future__ import annotations

import re

import pytest
from engine_factories import alices_job, vector_add_lab

from gpu_worker import profiling
from gpu_worker.measurement import ncu

# HAND-WRITTEN, NOT CAPTURED: a `ncu --csv --page raw --print-units base` log of the vector-add reference
# (n = 16,777,213) written from the documented format (a header row of metric names, a units row, one row
# per kernel; values with thousands separators) and plausible H200 numbers. Replace it with the real log
# the GPU run brings back (`WARPLAB_NCU_KEEP=$OUT`, or bench/ncu_vs_sim.py's raw CSVs) and keep the asserts.
VECTOR_ADD_LOG = """\
==PROF== Connected to process 41 (/usr/bin/python3.12)
==PROF== Profiling "vector_add" - 0: 0%....50%....100% - 38 passes
==PROF== Disconnected from process 41
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",\
"device__attribute_display_name","dram__bytes_read.sum","dram__bytes_write.sum",\
"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum",\
"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",\
"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",\
"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",\
"l1tex__t_sector_hit_rate.pct","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",\
"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum","lts__t_sector_hit_rate.pct",\
"sm__maximum_warps_per_active_cycle_pct","sm__warps_active.avg.pct_of_peak_sustained_active",\
"smsp__sass_inst_executed_op_shared_ld.sum","smsp__sass_inst_executed_op_shared_st.sum"
"","","","","","","","","","","","","byte","byte","%","nsecond","","","","","request","request","%","sector",\
"sector","%","%","%","inst","inst"
"0","41","python3.12","warplab","vector_add","1","13","(256, 1, 1)","(65536, 1, 1)","0","9.0","NVIDIA H200",\
"134,283,264","67,141,632","86.12","63,488","0","0","0","0","1,048,576","524,288","0","4,194,304","2,097,152",\
"33.34","100","84.61","0","0"
"""

# The same kernel written in CUDA Python: Numba mangles the name, ncu prints it demangled.
NUMBA_NAME = (
    "submission::vector_add[abi:v1][abi:cw51cXTLSUwv1sDUaKthqqNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqtspQ"
    "GNFHSgJ5BnXagIA_3d](Array<float, 1, C, mutable, aligned>, Array<float, 1, C, mutable, aligned>, Array<float, 1, "
    "C, mutable, aligned>)"
)


def _log_with(**values: str) -> str:
    """The vector-add log with some metrics replaced (by name)."""
    lines = VECTOR_ADD_LOG.splitlines()
    csv_at = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    header = [h.strip('"') for h in lines[csv_at].split('","')]
    cells = lines[csv_at + 2][1:-1].split('","')
    for name, value in values.items():
        cells[header.index(name)] = value
    lines[csv_at + 2] = '"' + '","'.join(cells) + '"'
    return "\n".join(lines) + "\n"


def test_it_reads_the_vector_add_profile_into_plain_facts():
    facts = ncu.parse_log(VECTOR_ADD_LOG, "vector_add")
    assert facts["available"] is True
    assert facts["kernel"] == "vector_add"
    assert facts["achieved_occupancy"] == pytest.approx(84.61)
    assert facts["theoretical_occupancy"] == 100
    assert facts["dram_bytes"] == 134_283_264 + 67_141_632
    assert facts["dram_throughput_pct"] == pytest.approx(86.12)
    assert facts["l1_hit_rate"] == 0 and facts["l2_hit_rate"] == pytest.approx(33.34)
    assert facts["global_load_sectors_per_request"] == 4
    assert facts["global_store_sectors_per_request"] == 4
    assert facts["shared_load_ways"] is None and facts["shared_store_ways"] is None  # no shared memory used
    assert facts["duration_ns"] == 63_488
    assert facts["raw"]["dram__bytes_read.sum"] == 134_283_264
    assert "device__attribute_display_name" not in facts["raw"]


def test_every_fact_is_explained_in_a_plain_sentence():
    said = ncu.parse_log(VECTOR_ADD_LOG)["explanations"]
    assert said[0].startswith("Achieved occupancy 85%: ")
    assert "of the 100% this launch allows (theoretical occupancy)" in said[0]
    assert any(s.startswith("The kernel moved 201.4 MB to and from the GPU's memory (DRAM), at 86%") for s in said)
    assert "Each warp's global load touched 4 sectors of 32 bytes on average." in said
    assert all(s.endswith(".") for s in said)


def test_shared_memory_ways_are_wavefronts_per_instruction():
    log = _log_with(
        **{
            "smsp__sass_inst_executed_op_shared_ld.sum": "65,536",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "2,097,152",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "2,031,616",
            "smsp__sass_inst_executed_op_shared_st.sum": "65,536",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "65,536",
        }
    )
    facts = ncu.parse_log(log)
    assert facts["shared_load_ways"] == 32
    assert facts["shared_store_ways"] == 1
    assert facts["shared_bank_conflicts"] == 2_031_616
    assert any(s.startswith("Shared-memory loads took 32 passes per warp instruction") for s in facts["explanations"])
    assert "Shared-memory stores had no bank conflicts (one pass per warp instruction)." in facts["explanations"]


def test_an_uncoalesced_load_is_told_how_many_sectors_it_touched():
    facts = ncu.parse_log(_log_with(**{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "33,554,432"}))
    assert facts["global_load_sectors_per_request"] == 32
    assert any("touched 32 sectors" in s and "need only 4" in s for s in facts["explanations"])


def test_the_older_dram_throughput_name_is_read_too():
    log = VECTOR_ADD_LOG.replace("gpu__dram_throughput", "dram__throughput")
    assert ncu.parse_log(log)["dram_throughput_pct"] == pytest.approx(86.12)


@pytest.mark.parametrize(
    ("cell", "unit", "value"),
    [
        ("1,234.5", "", 1234.5),
        ("134,283,264", "byte", 134_283_264),
        ("2.5", "Mbyte", 2.5e6),
        ("63.49", "usecond", 63_490),
        ("4.19", "Msector", 4.19e6),
        ("n/a", "", None),
        ("", "byte", None),
    ],
)
def test_cells_are_read_in_base_units_whatever_ncu_printed(cell, unit, value):
    assert ncu.number(cell, unit) == (pytest.approx(value) if value is not None else None)


def test_the_kernel_named_like_the_entry_is_chosen_among_several():
    lines = VECTOR_ADD_LOG.splitlines()
    other = lines[-1].replace('"0","41"', '"1","41"').replace('"vector_add"', '"fill_kernel"')
    other = other.replace('"84.61"', '"12.5"')
    log = "\n".join([*lines[:-1], other, lines[-1]]) + "\n"
    assert ncu.parse_log(log, "vector_add")["achieved_occupancy"] == pytest.approx(84.61)


def test_a_numba_kernel_is_matched_by_its_demangled_name():
    pattern = ncu.kernel_regex("vector_add").removeprefix("regex:")
    assert re.search(pattern, NUMBA_NAME)
    log = VECTOR_ADD_LOG.replace('"vector_add"', f'"{NUMBA_NAME}"')
    assert ncu.parse_log(log, "vector_add")["kernel"] == NUMBA_NAME


def test_no_permission_to_the_counters_says_profiling_is_not_allowed_on_this_slice():
    log = (
        "==PROF== Connected to process 41 (/usr/bin/python3.12)\n"
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters "
        "on the target device 0. For instructions on enabling permissions and to get more information see "
        "https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
        "==PROF== Disconnected from process 41\n"
        "==WARNING== No kernels were profiled.\n"
    )
    with pytest.raises(ncu.NcuError) as caught:
        ncu.parse_log(log)
    assert caught.value.reason.startswith("profiling is not allowed on this slice")
    assert "ERR_NVGPUCTRPERM" in caught.value.detail


def test_no_profiled_kernel_is_said_plainly():
    log = "==PROF== Connected to process 41\n==PROF== Disconnected from process 41\n"
    log += "==WARNING== No kernels were profiled.\n"
    with pytest.raises(ncu.NcuError, match="Nsight Compute saw no launch of your kernel"):
        ncu.parse_log(log)


def test_another_error_is_quoted():
    with pytest.raises(ncu.NcuError, match="Nsight Compute failed: Unknown Error on device 0."):
        ncu.parse_log("==ERROR== Unknown Error on device 0.\n")


def test_a_log_without_results_is_an_error_not_a_crash():
    with pytest.raises(ncu.NcuError, match="Nsight Compute wrote no results"):
        ncu.parse_log("==PROF== Connected to process 41\nhello from the learner\n")


@pytest.mark.parametrize(
    ("measured", "told"),
    [(1.09, False), (1.11, True), (1.9, True), (1.0, False), (0.91, False), (0.5, True)],
)
def test_a_dram_gap_over_10_percent_is_told(measured, told):
    declared = 201_326_556.0
    sentence = ncu.excess_traffic(measured * declared, declared)
    assert (sentence is not None) == told
    if told and measured > 1:
        assert sentence.startswith(f"Your kernel moved {measured:.2g}x the bytes it must (")
        assert "excess traffic" in sentence


def test_the_excess_sentence_names_both_amounts():
    sentence = ncu.excess_traffic(382_520_456.4, 201_326_556.0)
    assert sentence is not None
    assert sentence.startswith("Your kernel moved 1.9x the bytes it must (382.5 MB measured, 201.3 MB compulsory)")


def test_the_command_line_profiles_the_entry_once_with_three_sections_into_a_log():
    argv = ncu.command("/usr/local/cuda/bin/ncu", "vector_add", "/tmp/p/ncu.csv", ["python3", "-m", "child"])
    assert argv[:3] == ["/usr/local/cuda/bin/ncu", "--clock-control", "none"]
    sections = [argv[i + 1] for i, a in enumerate(argv) if a == "--section"]
    assert sections == ["SpeedOfLight", "Occupancy", "MemoryWorkloadAnalysis"]
    metrics = argv[argv.index("--metrics") + 1].split(",")
    assert "dram__bytes_read.sum" in metrics and "smsp__sass_inst_executed_op_shared_st.sum" in metrics
    joined = " ".join(argv)
    assert "--csv --page raw --print-units base" in joined
    assert "--kernel-name-base demangled --kernel-name regex:vector_add --launch-count 1" in joined
    assert argv[argv.index("--log-file") + 1] == "/tmp/p/ncu.csv"
    assert argv[-3:] == ["python3", "-m", "child"]


def test_an_entry_with_regex_characters_is_escaped():
    assert ncu.kernel_regex("k.v") == r"regex:k\.v"


def test_warplab_ncu_names_the_binary(monkeypatch, tmp_path):
    tool = tmp_path / "ncu"
    tool.write_text("#!/bin/sh\necho 'Version 2025.3.1.0 (build 36398880) (public-release)'\n")
    tool.chmod(0o755)
    monkeypatch.setenv(ncu.NCU_ENV, str(tool))
    assert ncu.find_ncu() == str(tool)
    assert ncu.version(str(tool)) == "2025.3.1.0"
    assert ncu.install_dir(str(tool)) == tmp_path


def test_a_missing_warplab_ncu_is_no_ncu(monkeypatch, tmp_path):
    monkeypatch.setenv(ncu.NCU_ENV, str(tmp_path / "absent"))
    assert ncu.find_ncu() is None


def test_the_raw_log_is_kept_when_asked(monkeypatch, tmp_path):
    log = tmp_path / "ncu.csv"
    log.write_text(VECTOR_ADD_LOG)
    keep = tmp_path / "kept"
    monkeypatch.setenv(ncu.KEEP_ENV, str(keep))
    ncu.keep_copy(log, "vector-add-cuda-7")
    assert (keep / "vector-add-cuda-7.csv").read_text() == VECTOR_ADD_LOG


def test_without_ncu_alices_profile_says_it_is_not_installed(monkeypatch):
    monkeypatch.setattr(ncu, "find_ncu", lambda: None)
    job = alices_job(vector_add_lab().references["cuda"], "cuda")
    runs = [{"sizes": {"n": n}, "seed": 1, "grid": [1, 1, 1], "block": [256, 1, 1]} for n in (1000, 4000)]
    events = []
    facts = profiling.profile_job(job, runs, {}, job.exercise.limits, lambda kind, **f: events.append((kind, f)))
    assert facts == {
        "available": False,
        "reason": "Nsight Compute is not installed on this worker",
        "index": 1,
        "sizes": {"n": 4000},
    }
    assert events == [("profile", facts)]


def test_the_largest_size_is_the_one_with_the_most_declared_bytes():
    job = alices_job(vector_add_lab().references["cuda"], "cuda")
    runs = [{"sizes": {"n": n}} for n in (4000, 16000, 1000)]
    declared = profiling.declared_bytes(job, runs)
    assert declared == {0: 48_000.0, 1: 192_000.0, 2: 12_000.0}
    assert profiling.largest(runs, declared) == 1


def test_nothing_is_profiled_off_the_gpu_or_when_switched_off(monkeypatch):
    job = alices_job(vector_add_lab().references["cuda"], "cuda")
    runs = [{"sizes": {"n": 1000}}]
    events = []
    assert profiling.profile_job(job, runs, {}, job.exercise.limits, events.append, backend="sim") is None
    monkeypatch.setenv(profiling.SWITCH_ENV, "0")
    assert profiling.profile_job(job, runs, {}, job.exercise.limits, events.append) is None
    assert events == []


def test_the_toolkits_launcher_gives_way_to_the_install_it_would_run(monkeypatch, tmp_path):
    # The CUDA toolkit's bin/ncu is a script that looks for nsight-compute* beside the toolkit, through a link
    # into /opt/nvidia on the H200: the sandbox binds the real install instead of repeating that lookup.
    real = tmp_path / "opt" / "nsight-compute" / "2025.3.1"
    real.mkdir(parents=True)
    (real / "ncu").write_text("#!/bin/sh\n")
    (real / "ncu").chmod(0o755)
    toolkit = tmp_path / "cuda-13.0"
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "nsight-compute-2025.3.1").symlink_to(real)
    (toolkit / "bin" / "ncu").write_text("#!/bin/sh\n")
    (toolkit / "bin" / "ncu").chmod(0o755)
    monkeypatch.setenv(ncu.NCU_ENV, str(toolkit / "bin" / "ncu"))
    assert ncu.find_ncu() == str(real / "ncu")
    assert ncu.install_dir(ncu.find_ncu()) == real
