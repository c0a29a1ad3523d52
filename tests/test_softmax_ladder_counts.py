"""bench/softmax_ladder.py's parts that need no GPU: lines of code, the rungs' reasons and configs, the table."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "softmax_ladder.py"


@pytest.fixture(scope="module")
def ladder():
    spec = importlib.util.spec_from_file_location("softmax_ladder", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["softmax_ladder"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("softmax_ladder", None)


def test_lines_of_code_leave_out_blanks_comments_and_docstrings(ladder, tmp_path):
    source = tmp_path / "k.py"
    source.write_text(
        'import x\n\n\n@jit\ndef k(a):\n    """Says what."""\n    # why\n    b = a\n\n    return b\n'
        "\ndef other():\n    pass\n"
    )
    assert ladder.python_loc(source, ["k"]) == 4  # the decorator, the def, two statements
    assert ladder.code_lines("// a comment\n\n__global__ void f() {\n}\n") == 2


def test_each_python_rung_counts_its_kernel_and_launch(ladder):
    bench = BENCH.parent / "ladder"
    assert ladder.python_loc(bench / "triton_softmax.py", ["softmax_kernel", "softmax"]) == 12
    assert ladder.python_loc(bench / "helion_softmax.py", ["softmax_rows", "softmax"]) == 12
    assert ladder.python_loc(BENCH, ["_library_torch"]) == 2


def test_the_cutlass_rung_says_why_it_cannot_run(ladder, monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    rung = ladder._cutlass_rung()
    assert rung.prepare is None and "64 MiB carry" in rung.why
    summary, rows = ladder.measure(None, rung, 1.0, 1)
    assert summary["status"] == "not runnable in the worker's image" and rows == []


def test_the_table_names_the_roof_and_each_rung_that_did_not_run(ladder):
    document = {
        "device": "NVIDIA H200",
        "date": "2026-12-06T18:00:00Z",
        "how": "events",
        "roof": {"bytes_per_s": 4.2e12, "source": "copy bandwidth"},
        "rungs": [
            {"rung": "Triton", "loc": 12, "status": "ran"},
            {"rung": "CUTLASS", "loc": None, "status": "not runnable in the worker's image", "why": "too big"},
        ],
        "results": [
            {"rung": "Triton", "rows": 2, "cols": 3, "median_us": 10.0, "bandwidth_gbs": 3000.0, "roof_pct": 71.4}
        ],
    }
    table = ladder.markdown(document)
    assert "NVIDIA H200, 2026-12-06T18:00:00Z" in table and "4200 GB/s, copy bandwidth" in table
    assert "| Triton | 12 | ran | 2 x 3 | 10.0 | 3000 | 71 |" in table
    assert "| CUTLASS | - | not runnable in the worker's image: too big |" in table


def test_the_helion_rung_gives_its_kernel_one_config_so_it_never_autotunes():
    # Helion autotunes a kernel unless it is given exactly one config: minutes of a device call's time.
    tree = ast.parse((BENCH.parent / "ladder" / "helion_softmax.py").read_text())
    kernel = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "softmax_rows")
    (decorator,) = kernel.decorator_list
    assert ast.unparse(decorator.func) == "helion.kernel"
    (config,) = [keyword.value for keyword in decorator.keywords if keyword.arg == "config"]
    assert ast.unparse(config.func) == "helion.Config"
    assert not [keyword for keyword in decorator.keywords if keyword.arg in {"configs", "autotune_effort"}]
