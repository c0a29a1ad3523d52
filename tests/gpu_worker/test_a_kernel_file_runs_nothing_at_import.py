"""A learner's CUDA Python file may hold imports, constants and kernels at module level, and nothing that runs."""

from __future__ import annotations

import ast

import pytest

from gpu_worker.backends.module_rules import check_module

ALLOWED = [
    "from numba import cuda, float32\nTILE = 32\nPADDED = TILE + 1  # pad\n",
    '"""Doc."""\nimport math\nimport numpy as np\nHALF = np.float32(0.5)\nSHAPE = (32, 33)\n',
    "from numba import cuda\n@cuda.jit\ndef k(a):\n    import os\n    a[0] = 1\n",
    "import numba.cuda\n@numba.cuda.jit('void(float32[:])', fastmath=True, max_registers=32)\ndef k(a):\n    pass\n",
    "from numba import cuda, void, float32\nSIG = void(float32[:, ::1])\n@cuda.jit(device=True)\ndef f(x):\n"
    "    return x\n",
    "from __future__ import annotations\nfrom numba import cuda\ndef helper(x):\n    return x\n",
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
