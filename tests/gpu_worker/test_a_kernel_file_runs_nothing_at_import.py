"""A learner's CUDA Python file may hold imports, constants and kernels at module level, and nothing that runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpu_worker.backends.module_rules import check_module

ALLOWED = [
    "from numba import cuda, float32\nTILE = 32\nPADDED = TILE + 1  # pad\n",
    '"""Doc."""\nimport math\nimport numpy as np\nHALF = np.float32(0.5)\nSHAPE = (32, 33)\n',
    "from numba import cuda\n@cuda.jit\ndef k(a):\n    import os\n    a[0] = 1\n",
    "import numba.cuda\nfrom numba import void, float32\n"
    "@numba.cuda.jit(void(float32[:]), fastmath=True, max_registers=32)\ndef k(a):\n    pass\n",
    "from numba import cuda, void, float32\nSIG = void(float32[:, ::1])\n@cuda.jit(device=True)\ndef f(x):\n"
    "    return x\n",
    "from __future__ import annotations\nfrom numba import cuda\ndef helper(x):\n    return x\n",
    "from numba import cuda, void, float32\nSIG = void(float32[:, ::1])\n@cuda.jit(SIG)\ndef k(a):\n    pass\n",
    "from numba import cuda, void, int32\n@cuda.jit(void(int32[::1]), inline='always', launch_bounds=(256, 2))\n"
    "def k(a):\n    pass\n",
    "from numba import cuda\n@cuda.jit(max_registers=16, lineinfo=True, opt=True, fastmath=False)\n"
    "def k(a):\n    pass\n",
]

# Decorator arguments Numba would evaluate, and names that pass for a type or for `cuda.jit` (issue 27).
STRING = "string signature"
DECORATOR = "kernel's decorator"
EVALUATED_BY_NUMBA = [
    (
        "from numba import cuda\n@cuda.jit(\"(__import__('os')._exit(0), void(float32[:]))[1]\")\n"
        "def k(a):\n    pass\n",
        2,
        STRING,
    ),
    ("from numba import cuda\n@cuda.jit('void(float32[:])')\ndef k(a):\n    pass\n", 2, STRING),
    ("from numba import cuda\n@cuda.jit(['void(float32[:])'])\ndef k(a):\n    pass\n", 2, STRING),
    ("from numba import cuda\nSIG = 'void(float32[:])'\n@cuda.jit(SIG)\ndef k(a):\n    pass\n", 3, DECORATOR),
    ("from numba import cuda\n@cuda.jit(link=['/etc/passwd'])\ndef k(a):\n    pass\n", 2, "`link` is not an option"),
    ("from numba import cuda\n@cuda.jit(cache=True)\ndef k(a):\n    pass\n", 2, "`cache` is not an option"),
    ("from numba import cuda\n@cuda.jit(extensions=[])\ndef k(a):\n    pass\n", 2, "`extensions` is not an option"),
    ("from numba import cuda\ndef f(*a):\n    pass\n@cuda.jit(inline=f)\ndef k(a):\n    pass\n", 4, "literal"),
    ("from numba import cuda\nR = 32\n@cuda.jit(max_registers=R)\ndef k(a):\n    pass\n", 3, "literal"),
    ("from numba import cuda\n@cuda.jit(**{'cache': True})\ndef k(a):\n    pass\n", 2, "`**options`"),
    ("from numba import cuda, void\n@cuda.jit(void(), void())\ndef k(a):\n    pass\n", 2, DECORATOR),
    ("import numba\n@numba.jit\ndef k(a):\n    pass\n", 2, DECORATOR),
    ("from numba import njit as jit\n@jit\ndef k(a):\n    pass\n", 2, DECORATOR),
    ("import numpy\njit = numpy.testing\n@jit\ndef k(a):\n    pass\n", 3, DECORATOR),
    ("from numpy import load as float32\nX = float32('x.npy', allow_pickle=True)\n", 2, "constants"),
    ("def dtype():\n    pass\nX = dtype()\n", 3, "constants"),
    ("import numpy as np\nfloat32 = np.ctypeslib\nX = float32()\n", 3, "constants"),
    ("def __getattr__(name):\n    pass\n", 1, "`__getattr__`"),
]

REFUSED = [
    ("import cupy\ncupy.cuda.get_elapsed_time = lambda a, b: 0.0\n", 1, "cannot be imported"),
    ("import numpy as np\nnp.allclose = lambda *a, **k: True\n", 2, "plain names"),
    ("import time\n", 1, "cannot be imported"),
    ("from numba import cuda\ncuda.jit = None\n", 2, "plain names"),
    ("import numpy\nX = numpy.zeros(3)\n", 2, "constants"),
    ("import numpy\nnumpy.seterr(all='ignore')\n", 2, "found a `expr`"),
    ("import os\n", 1, "cannot be imported"),
    ("from gpu_worker import timing\n", 1, "cannot be imported"),
    ("if True:\n    import os\n", 1, "found a `if`"),
    ("try:\n    pass\nexcept Exception:\n    pass\n", 1, "found a `try`"),
    ("class K:\n    pass\n", 1, "found a `classdef`"),
    ("import numpy\nX = numpy.__loader__\n", 2, "constants"),
    ("from numba import cuda\n@cuda.jit(cache=__import__('os').system('x'))\ndef k(a):\n    pass\n", 2, "decorator"),
    ("def k(a=__import__('os')):\n    pass\n", 1, "defaults and annotations"),
    ("def k(a: print('hi')):\n    pass\n", 1, "defaults and annotations"),
    ("x: print('hi') = 1\n", 1, "constants"),
    ("import functools\n@functools.lru_cache\ndef k():\n    pass\n", 1, "cannot be imported"),
    ("def deco(f):\n    return f\n@deco\ndef k():\n    pass\n", 3, "decorator"),
    ("from . import x\n", 1, "relative"),
    ("from numpy import *\n", 1, "import the names"),
    ("for i in range(3):\n    pass\n", 1, "found a `for`"),
    ("exec('import os')\n", 1, "found a `expr`"),
    ("X = [i for i in range(3)]\n", 1, "constants"),
    ("X = lambda: 0\n", 1, "constants"),
    ("import numpy as np\nX = np.float32(open('/etc/passwd').read())\n", 2, "constants"),
    ("__builtins__ = {}\n", 1, "plain names"),
]


@pytest.mark.parametrize("source", ALLOWED)
def test_it_accepts_imports_constants_and_kernels(source: str) -> None:
    assert check_module(ast.parse(source)) is None


@pytest.mark.parametrize(("source", "line", "words"), REFUSED)
def test_it_refuses_module_code_that_could_run_anything(source: str, line: int, words: str) -> None:
    breach = check_module(ast.parse(source))
    assert breach is not None
    assert breach.line == line
    assert words in breach.message


@pytest.mark.parametrize(("source", "line", "words"), EVALUATED_BY_NUMBA)
def test_it_refuses_what_numba_would_evaluate_and_names_that_pass_for_types(source: str, line: int, words: str) -> None:
    breach = check_module(ast.parse(source))
    assert breach is not None
    assert (breach.line, words in breach.message) == (line, True), breach.message


def test_it_accepts_every_labs_cuda_python_reference_and_starter() -> None:
    files = [p for name in ("reference.py", "starter.py") for p in Path("labs/content").rglob(name)]
    kernels = [p for p in files if "cuda.jit" in p.read_text()]
    assert len(kernels) > 20
    refused = {str(p): check_module(ast.parse(p.read_text())) for p in kernels}
    assert {p: b.message for p, b in refused.items() if b is not None} == {}


PATCHING_AT_IMPORT = """
from numba import cuda
import numpy
numpy.testing.assert_allclose = lambda *a, **k: None

@cuda.jit
def vector_add(a, b, c):
    pass
"""


def test_a_module_that_patches_numpy_at_import_is_a_compile_error_on_its_line() -> None:
    from engine_factories import alices_job, run

    done = run(alices_job(PATCHING_AT_IMPORT))
    assert done.result.verdict == "compile_error"
    assert done.result.compile is not None
    first = done.result.compile.diagnostics[0]
    assert first.line == 4
    assert "plain names" in first.message
