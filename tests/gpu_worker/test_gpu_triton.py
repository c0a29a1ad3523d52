"""Triton on a real GPU: compiled in its own process, its cubin launched, checked and timed by the harness.

Run on the H200 (`pytest -m gpu tests/gpu_worker/test_gpu_triton.py`); the
first test prints the device image's Triton, which the compile report records.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.exercise.launch import LaunchConfig
from gpu_worker.protocol import Event, Job

pytestmark = pytest.mark.gpu
_ids = itertools.count(90_000)
VECTOR_ADD = find_lab("vector-add")
ARGS = VECTOR_ADD.exercise_ref("triton").harness.args_for("triton")
OPTIONS = {"constexprs": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 3}


@pytest.fixture(scope="module")
def backend():
    from gpu_worker.backends.cuda import CudaBackend

    b = CudaBackend()
    yield b
    b.close()


@pytest.fixture(scope="module")
def compiled(backend, tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("triton")
    return backend.compile("triton", VECTOR_ADD.references["triton"], "vector_add", ARGS, folder, OPTIONS)


def test_the_compile_report_names_the_workers_triton_and_the_loaded_binarys_resources(compiled):
    import triton

    info = compiled.info
    print(f"device image: Triton {triton.__version__}; report: {info.tool}; notes: {info.notes}")
    assert info.tool.startswith(f"Triton {triton.__version__}")
    assert info.arch == "sm_90" and info.registers and info.registers > 0
    assert info.shared_bytes == 0 and info.max_threads_per_block == 128
    assert ".entry vector_add" in info.ptx_excerpt and "// line" in (info.sass_excerpt or "")


def test_the_cubin_launches_through_tritons_abi_and_writes_the_outputs(backend, compiled):
    n = 1_000_003
    rng = np.random.default_rng(5)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.full(n, np.nan, dtype=np.float32)
    backend.launch(compiled.handle, [a, b, c, np.int32(n)], LaunchConfig(((n + 1023) // 1024,), (128,)))
    np.testing.assert_array_equal(c, a + b)


def test_the_driver_and_the_calculator_agree_on_a_triton_kernels_occupancy(backend, compiled):
    occupancy = backend.occupancy(compiled.handle, LaunchConfig((1000,), (128,)))
    assert occupancy["threads_per_block"] == 128 and occupancy["agree"], occupancy


def test_a_triton_kernel_is_timed_like_the_others(backend, compiled):
    n = 16_777_213
    values = [np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32), np.int32(n)]
    backend.launch(compiled.handle, values, LaunchConfig(((n + 1023) // 1024,), (128,)))
    t = backend.time()
    assert 0.02 < t["median_ms"] < 1.0


def test_a_triton_compile_error_is_the_learners_on_the_gpu_too(backend, tmp_path: Path):
    from gpu_worker.backends.base import LearnerError

    bad = VECTOR_ADD.references["triton"].replace("tl.arange(0, BLOCK)", "tl.arange(0, 1000)")
    with pytest.raises(LearnerError) as caught:
        backend.compile("triton", bad, "vector_add", ARGS, tmp_path, OPTIONS)
    assert caught.value.verdict == "compile_error" and caught.value.diagnostics[0].line == 7


@pytest.mark.parametrize("slug", ["vector-add", "softmax-online"])
def test_the_triton_reference_is_accepted_with_timing_and_metrics(slug: str):
    lab = find_lab(slug)
    events: list[Event] = []
    job = Job(
        submission_id=next(_ids),
        exercise=lab.exercise_ref("triton"),
        source=lab.references["triton"],
        requested_by="alice",
    )
    result = run_job(job, events.append, backend="cuda")
    assert result.verdict == "accepted", result.message
    kinds = [e.type for e in events]
    sizes = len(lab.spec.sizes["cuda"])
    assert kinds.count("timing") == sizes and kinds.count("metrics") == sizes
    for o in result.occupancy["sizes"]:
        assert o["driver_blocks_per_sm"] == o["offline"]["active_blocks_per_sm"]
    print(slug, [round(m["bandwidth"] / 1e9) for m in result.metrics["sizes"]], "GB/s", result.goals)


def test_a_wrong_triton_kernel_is_a_wrong_answer_judged_on_the_device():
    case = next(c for c in VECTOR_ADD.cases if c.name == "wrong-operator-triton")
    job = Job(
        submission_id=next(_ids), exercise=VECTOR_ADD.exercise_ref("triton"), source=case.source, requested_by="alice"
    )
    assert run_job(job, lambda e: None, backend="cuda").verdict == "wrong_answer"
