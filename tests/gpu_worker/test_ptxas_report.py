"""ptxas -v output is read into registers, shared memory, spills and stack frame per kernel."""

from __future__ import annotations

from gpu_worker.backends.ptxas import entries, excerpt, parse_verbose
from gpu_worker.protocol import CompileInfo

VERBOSE = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'tiled' for 'sm_90'
ptxas info    : Function properties for tiled
    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 72 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]
ptxas info    : Compile time = 10.102 ms
ptxas info    : Function properties for helper
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'plain' for 'sm_90'
ptxas info    : Function properties for plain
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 15 registers, used 0 barriers
"""


def test_it_reads_every_number_of_each_kernel():
    kernels = parse_verbose(VERBOSE)
    assert set(kernels) == {"tiled", "plain"}
    tiled = kernels["tiled"]
    assert (tiled.registers, tiled.shared_bytes, tiled.barriers, tiled.constant_bytes) == (72, 1024, 1, 380)
    assert (tiled.stack_frame_bytes, tiled.spill_store_bytes, tiled.spill_load_bytes) == (16, 8, 12)
    assert kernels["plain"].registers == 15 and kernels["plain"].shared_bytes == 0


def test_it_fills_compile_info_with_spill_stores_as_spill_bytes():
    info = parse_verbose(VERBOSE)["tiled"].fill(CompileInfo())
    assert (info.registers, info.shared_bytes, info.spill_bytes, info.local_bytes, info.arch) == (
        72,
        1024,
        8,
        16,
        "sm_90",
    )


def test_it_finds_entries_and_cuts_an_excerpt():
    ptx = (
        "//\n.version 8.0\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
        + "\tmov.u32 %r1, %tid.x;\n" * 100
        + "}\n"
    )
    assert entries(ptx) == ["k"]
    cut = excerpt(ptx, "k", max_lines=10)
    assert cut.startswith(".visible .entry k(") and cut.endswith("more lines") and len(cut.splitlines()) == 11
