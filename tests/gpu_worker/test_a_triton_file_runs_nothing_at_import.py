"""A Triton kernel file holds imports of triton, math and numpy, constants and `@triton.jit` functions only."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gpu_worker.backends.module_rules import check_module
from gpu_worker.exercise.labspec import find_lab


def breach(source: str, language: str = "triton"):
    return check_module(ast.parse(textwrap.dedent(source)), language)


KERNEL = """
@triton.jit
def vector_add(a, b, c, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c + offsets, tl.load(a + offsets) + tl.load(b + offsets))
"""


def test_it_accepts_the_labs_triton_files():
    lab = find_lab("vector-add")
    assert breach(lab.references["triton"]) is None
    assert breach(lab.starters["triton"]) is None


def test_it_accepts_constexpr_constants_and_literal_jit_options():
    source = "import triton\nimport triton.language as tl\nBLOCK = tl.constexpr(1024)\nSCALE = 0.5\n"
    source += KERNEL.replace("@triton.jit", '@triton.jit(do_not_specialize=["n"], debug=False)')
    assert breach(source) is None


@pytest.mark.parametrize(
    ("prelude", "line", "words"),
    [
        ("import time\n", 1, "`time` cannot be imported"),
        ("import numba\n", 1, "`numba` cannot be imported"),
        ("import triton\ntriton.jit = None\n", 2, "plain names"),
        ("import triton\nX = open('/etc/passwd')\n", 2, "constants"),
        ("import triton\nprint('hi')\n", 2, "`expr` statement"),
        ("import triton\ndef helper(x):\n    return x\n", 2, "@triton.jit"),
    ],
)
def test_it_refuses_code_that_would_run_at_import(prelude: str, line: int, words: str):
    found = breach(prelude + KERNEL)
    assert found is not None and found.line == line and words in found.message


def test_it_refuses_jit_options_that_take_callables():
    found = breach("import triton\n" + KERNEL.replace("@triton.jit", "@triton.jit(launch_metadata=vector_add)"))
    assert found is not None and "literal" in found.message


def test_it_refuses_any_decorator_but_triton_jit():
    found = breach("import triton\n" + KERNEL.replace("@triton.jit", "@triton.autotune(configs=[], key=[])"))
    assert found is not None and found.line == 3  # the decorator's line (KERNEL starts with a blank line)


def test_a_numba_file_still_may_not_import_triton():
    found = breach("import triton\n" + KERNEL, language="numba")
    assert found is not None and "`triton` cannot be imported" in found.message


@pytest.mark.parametrize(
    ("decorator", "prelude"),
    [
        ('@triton.jit(debug="yes")', ""),
        ("@triton.jit(do_not_specialize=[print])", ""),
        ("@triton.jit(noinline=NOINLINE)", "NOINLINE = True\n"),
        ("@jit", "import numpy\njit = numpy.testing\n"),
        ("@triton.jit(**{'debug': True})", ""),
    ],
)
def test_it_refuses_jit_options_that_are_not_literal_data_and_names_that_pass_for_jit(decorator: str, prelude: str):
    found = breach("import triton\n" + prelude + KERNEL.replace("@triton.jit", decorator))
    assert found is not None and "literal" in found.message


def test_it_accepts_jit_imported_by_name():
    assert (
        breach("from triton import jit\nimport triton.language as tl\n" + KERNEL.replace("@triton.jit", "@jit")) is None
    )
