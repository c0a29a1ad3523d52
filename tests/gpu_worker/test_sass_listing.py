"""SASS is shown with the learner's own source lines between its instructions."""

from __future__ import annotations

import functools

import pytest
from engine_factories import alices_job, run, vector_add_lab

from gpu_worker.backends import sass

LISTING = """
//--------------------- .text.other --------------------------
        /*0000*/                   EXIT ;
//--------------------- .text.vector_add --------------------------
vector_add:
\t//## File "/tmp/x/submission.cu", line 6
        /*0010*/                   FADD R9, R4, R3 ;
        /*0020*/                   NOP ;
\t//## File "/tmp/x/submission.cu", line 99
        /*0030*/                   EXIT ;
"""


def test_each_source_line_stands_above_its_instructions_and_padding_is_dropped():
    source = "\n".join(f"line{i}" for i in range(1, 7)).replace("line6", "    c[i] = a[i] + b[i];")
    text = sass.annotate(LISTING, "vector_add", source)
    assert text.splitlines() == [
        "// line 6: c[i] = a[i] + b[i];",
        "    FADD R9, R4, R3 ;",
        "// line 99: ",
        "    EXIT ;",
    ]


def test_a_kernel_absent_from_the_listing_gives_nothing():
    assert sass.annotate(LISTING, "missing", "") is None


@functools.cache
def compiled(language: str):
    lab = vector_add_lab()
    return run(alices_job(lab.references[language], language)).result.compile


@pytest.mark.skipif(sass.find_nvdisasm() is None, reason="needs nvdisasm (pip package nvidia-cuda-nvdisasm)")
@pytest.mark.parametrize(
    ("language", "line"), [("numba", "// line 8: c[i] = a[i] + b[i]"), ("cuda", "// line 6: c[i] = a[i] + b[i];")]
)
def test_the_reference_kernels_sass_shows_the_addition_under_its_line(language, line):
    listing = compiled(language).sass_excerpt
    after = listing.split(line, 1)[1].split("// line", 1)[0]
    assert "FADD" in after and "STG" in after and after.count("LDG") == 2


def test_the_gpu_paths_reading_listing_of_a_python_kernel_has_its_lines_above_the_sass(tmp_path):
    from gpu_worker.backends.learner_module import import_learner_module
    from gpu_worker.backends.listing import listing
    from gpu_worker.backends.numba_ptx import _allow_missing_nvrtc, signature

    _allow_missing_nvrtc()  # this machine has no libnvrtc; numba's PTX path does not need it
    source = vector_add_lab().references["numba"]
    path = tmp_path / "submission.py"
    path.write_text(source)
    kernel = import_learner_module(path).vector_add
    sig = signature([["float32", 1], ["float32", 1], ["float32", 1]])
    found = listing("numba", source, "vector_add", "sm_90", tmp_path, py_func=kernel.py_func, signature=sig)
    assert found["notes"] == []
    assert ".entry vector_add" in found["ptx_excerpt"]
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "c[i] = a[i] + b[i]" in text)
    assert f"// line {line}:" in found["sass_excerpt"]
    assert "STG" in found["sass_excerpt"]


def test_a_listing_that_cannot_compile_leaves_a_note_instead_of_failing(tmp_path):
    from gpu_worker.backends.listing import listing

    found = listing("numba", "", "vector_add", "sm_90", tmp_path, py_func=None, signature=None)
    assert found["ptx_excerpt"] is None and found["sass_excerpt"] is None
    assert found["notes"] and found["notes"][0].startswith("no PTX listing")
