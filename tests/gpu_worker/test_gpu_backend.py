"""The cuda backend in this process on a real GPU: compile, attributes, diagnostics, launch, occupancy, timing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench import kernels
from gpu_worker.exercise.launch import LaunchConfig
from gpu_worker.protocol import ArgSpec

pytestmark = pytest.mark.gpu

ARGS = [
    ArgSpec(name="a", role="in", shape=["n"]),
    ArgSpec(name="b", role="in", shape=["n"]),
    ArgSpec(name="c", role="out", shape=["n"]),
    ArgSpec(name="n", role="scalar", dtype="int32", value="n"),
]


@pytest.fixture(scope="module")
def backend():
    from gpu_worker.backends.cuda import CudaBackend

    b = CudaBackend()
    yield b
    b.close()


def _values(n: int, with_n: bool = True) -> list:
    rng = np.random.default_rng(3)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.full(n, np.nan, dtype=np.float32)
    return [a, b, c, np.int32(n)] if with_n else [a, b, c]


def test_cuda_cpp_compiles_with_attributes_from_cupy(backend, tmp_path: Path):
    compiled = backend.compile("cuda", kernels.VECTOR_ADD, "vector_add", ARGS, tmp_path)
    info = compiled.info
    assert info.arch == "sm_90" and info.registers and info.registers > 0
    assert info.shared_bytes == 0 and info.local_bytes == 0 and info.max_threads_per_block == 1024


def test_a_cuda_cpp_syntax_error_points_at_the_learners_line_and_column(backend, tmp_path: Path):
    from gpu_worker.backends.base import LearnerError

    with pytest.raises(LearnerError) as caught:
        backend.compile("cuda", kernels.COMPILE_ERROR, "vector_add", ARGS, tmp_path)
    err = caught.value
    assert err.verdict == "compile_error"
    first = err.diagnostics[0]
    assert first.line == 5 and first.column is not None  # the missing ';' at the end of line 5
    assert "expected" in first.message


def test_a_missing_entry_is_rejected(backend, tmp_path: Path):
    from gpu_worker.backends.base import LearnerError

    with pytest.raises(LearnerError) as caught:
        backend.compile("cuda", kernels.VECTOR_ADD, "vector_sub", ARGS, tmp_path)
    assert caught.value.verdict == "rejected"


def test_cuda_cpp_launches_and_writes_the_outputs_back(backend, tmp_path: Path):
    compiled = backend.compile("cuda", kernels.VECTOR_ADD, "vector_add", ARGS, tmp_path)
    n = 1_000_003
    values = _values(n)
    backend.launch(compiled.handle, values, LaunchConfig(((n + 255) // 256,), (256,)))
    np.testing.assert_array_equal(values[2], values[0] + values[1])


def test_numba_compiles_with_the_dispatchers_attributes_and_launches(backend, tmp_path: Path):
    args = ARGS[:3]
    compiled = backend.compile("numba", kernels.NUMBA_VECTOR_ADD, "vector_add", args, tmp_path)
    assert compiled.info.registers and compiled.info.max_threads_per_block == 1024
    assert compiled.info.ptx_excerpt and ".entry" in compiled.info.ptx_excerpt
    n = 4_194_301
    values = _values(n, with_n=False)
    backend.launch(compiled.handle, values, LaunchConfig(((n + 255) // 256,), (256,)))
    np.testing.assert_array_equal(values[2], values[0] + values[1])


def test_the_driver_and_the_offline_calculator_agree_on_occupancy(backend, tmp_path: Path):
    compiled = backend.compile("cuda", kernels.TRANSPOSE, "transpose", ARGS[:3], tmp_path)
    for block in ((32, 8), (32, 32), (16, 4)):
        occ = backend.occupancy(compiled.handle, LaunchConfig((4, 4), block))
        assert occ["agree"], occ


def test_timing_reports_a_tight_median_within_budget(backend, tmp_path: Path):
    compiled = backend.compile("cuda", kernels.VECTOR_ADD, "vector_add", ARGS, tmp_path)
    n = 16_777_213
    backend.launch(compiled.handle, _values(n), LaunchConfig(((n + 255) // 256,), (256,)))
    t = backend.time()
    assert 0.02 < t["median_ms"] < 1.0
    assert t["ci_ms"][0] <= t["median_ms"] <= t["ci_ms"][1]
    assert t["gpu_seconds"] <= 0.4
    assert t["sm_clock_mhz"][0] is None or t["sm_clock_mhz"][0] > 1000
