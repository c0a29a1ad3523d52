"""A Numba kernel that calls a `@cuda.jit(device=True)` function compiles to PTX on a machine without a GPU.

numba-cuda compiles a device function for `get_current_device()`'s architecture,
which asks the driver; without one the compile failed, and the sim backend used
to carry on without PTX (issue 27). The compile process now names the
architecture itself, so softmax-online and tensor-parallel-mlp compile here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_worker.backends import compile_server
from gpu_worker.exercise.labspec import find_lab


@pytest.mark.parametrize("slug", ["softmax-online", "tensor-parallel-mlp"])
def test_a_labs_reference_with_a_device_function_compiles_for_sm_90(tmp_path: Path, slug: str) -> None:
    lab = find_lab(slug)
    source = lab.references["numba"]
    assert "device=True" in source
    exercise = lab.exercise_ref("numba")
    path = tmp_path / "submission.py"
    path.write_text(source)
    server = compile_server.CompileServer()
    try:
        server.compile(path, exercise.entry, exercise.harness.args_for("numba"), (9, 0), listing=False)
        found = server.result(timeout=120)
    finally:
        server.stop()
    assert found["ok"], found.get("message")
    assert found["info"]["arch"] == "sm_90" and found["info"]["registers"] > 0
    assert ".entry" in found["ptx"]
