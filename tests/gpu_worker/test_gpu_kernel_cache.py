"""On the GPU: CuPy compiles into the job's own cache, and jobs served by spares pass one after another."""

from __future__ import annotations

import itertools

import pytest

from gpu_worker import kernel_cache
from gpu_worker.engine import run_job
from gpu_worker.labspec import find_lab
from gpu_worker.protocol import Job

pytestmark = pytest.mark.gpu
_ids = itertools.count(90_000)

KERNEL = r'extern "C" __global__ void warplab_cache_probe(float* x) { x[threadIdx.x] = 2.0f; }'


def test_pointing_cupy_elsewhere_after_it_compiled_moves_its_cache(tmp_path):
    cupy = pytest.importorskip("cupy")
    kernel_cache.use(tmp_path / "first")
    cupy.RawModule(code=KERNEL + "// 1").get_function("warplab_cache_probe")
    kernel_cache.use(tmp_path / "second")  # CuPy 14 built its cache backend at the first compilation
    cupy.RawModule(code=KERNEL + "// 2").get_function("warplab_cache_probe")
    assert len(list((tmp_path / "first").iterdir())) == 1
    assert len(list((tmp_path / "second").iterdir())) == 1


def test_jobs_served_by_spares_are_accepted_one_after_another(monkeypatch):
    """Run 13: a spare compiled as root into a cache its job (uid 65534) could not write; the job failed."""
    monkeypatch.setenv("WARPLAB_SPARE_SANDBOX", "1")
    lab = find_lab("vector-add")
    warm = []
    for language in ("cuda", "cuda", "numba", "cuda"):
        job = Job(
            submission_id=next(_ids),
            exercise=lab.exercise_ref(language),
            source=lab.references[language],
            requested_by="alice",
        )
        result = run_job(job, lambda event: None, backend="cuda")
        assert result.verdict == "accepted", result.message
        warm.append(bool(result.sandbox.get("warm_start")))
    assert warm[0] is False and warm[1] is True and warm[3] is True  # numba's limits may key another spare
