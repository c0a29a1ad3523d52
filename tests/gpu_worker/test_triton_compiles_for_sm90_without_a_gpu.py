"""Triton compiles a learner's kernel ahead of time for sm_90 in its own process, on a machine with no GPU.

The measuring process then trusts nothing of the answer it cannot check: the
PTX's parameters against the exercise's (`triton_abi.read`), and what it
refuses to launch is said in words.
"""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path

import pytest

from gpu_worker.backends import compile_server, triton_abi
from gpu_worker.exercise.labspec import find_lab

LAB = find_lab("vector-add")
ARGS = LAB.exercise_ref("triton").harness.args_for("triton")
OPTIONS = {"constexprs": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 3}


def _compile(folder: Path, source: str, options: dict | None = None) -> dict:
    path = folder / "submission.py"
    path.write_text(textwrap.dedent(source))
    server = compile_server.CompileServer("triton_ptx")
    try:
        server.compile(path, "vector_add", ARGS, (9, 0), OPTIONS if options is None else options)
        return server.result(timeout=120)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _compile(tmp_path_factory.mktemp("reference"), LAB.references["triton"])


def test_it_hands_back_a_cubin_and_ptx_whose_parameters_the_measuring_side_understands(reference: dict):
    assert reference["ok"], reference
    abi = triton_abi.read(reference["kernel"], reference["ptx"], ARGS)
    assert abi.name == "vector_add" and abi.num_warps == 4 and abi.threads == 128 and abi.shared == 0
    scratch_fields = [k for k in triton_abi.SCRATCH_FIELDS if k in reference["kernel"]]
    assert abi.scratch == len(scratch_fields)
    assert base64.b64decode(reference["cubin"])[:4] == b"\x7fELF"
    assert ".reqntid 128" in reference["ptx"]


def test_its_report_has_the_compiled_kernels_registers_and_sass_on_the_learners_lines(reference: dict):
    info = reference["info"]
    assert info["tool"].startswith("Triton 3.") and info["arch"] == "sm_90"
    assert info["registers"] and info["registers"] > 0 and info["spill_bytes"] == 0
    assert info["max_threads_per_block"] == 128
    assert "// line 10: y = tl.load(b + offsets, mask=mask)" in info["sass_excerpt"]


def test_a_triton_compile_error_lands_on_the_learners_line(tmp_path: Path):
    source = LAB.references["triton"].replace("tl.arange(0, BLOCK)", "tl.arange(0, 1000)")
    found = _compile(tmp_path, source)
    assert found["kind"] == "compile_error"
    assert found["diagnostic"]["line"] == 7 and "power of 2" in found["diagnostic"]["message"]


def test_a_kernel_calling_python_is_refused_by_the_compiler(tmp_path: Path):
    calls_python = "mask = offsets < len(open('/etc/hostname').read())"
    source = LAB.references["triton"].replace("mask = offsets < n", calls_python)
    found = _compile(tmp_path, source)
    assert found["kind"] == "compile_error" and found["diagnostic"]["line"] == 8


def test_a_missing_constexpr_is_the_learners_compile_error(tmp_path: Path):
    found = _compile(tmp_path, LAB.references["triton"], {"constexprs": {}, "num_warps": 4})
    assert found["kind"] == "compile_error" and "BLOCK is a tl.constexpr this exercise does not set" in found["message"]


def test_a_module_that_patches_at_import_never_compiles(tmp_path: Path):
    found = _compile(tmp_path, "import os\n" + LAB.references["triton"])
    assert found["kind"] == "import" and found["error"]["verdict"] == "compile_error"
    assert found["error"]["diagnostic"]["line"] == 1
