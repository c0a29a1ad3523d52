"""On the GPU: CuPy compiles into the job's own cache, and jobs served by spares pass one after another."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_worker.engine import run_job, start_first_spare
from gpu_worker.exercise.labspec import Lab, find_lab
from gpu_worker.isolation import spare
from gpu_worker.measurement import kernel_cache
from gpu_worker.protocol import Job, Result

pytestmark = pytest.mark.gpu
_ids = itertools.count(90_000)


def _run_reference(lab: Lab, language: str) -> Result:
    job = Job(
        submission_id=next(_ids),
        exercise=lab.exercise_ref(language),
        source=lab.references[language],
        requested_by="alice",
    )
    return run_job(job, lambda event: None, backend="cuda")


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
    spare.shutdown()  # no spare left by an earlier test: the first job here starts cold
    lab = find_lab("vector-add")
    warm = []
    for language in ("cuda", "cuda", "numba", "cuda"):
        result = _run_reference(lab, language)
        assert result.verdict == "accepted", result.message
        warm.append(bool(result.sandbox.get("warm_start")))
    assert warm[0] is False and warm[1] is True and warm[3] is True  # numba's limits may key another spare


@pytest.mark.parametrize("language", ["numba", "cuda"])
def test_the_first_job_of_a_fresh_worker_is_served_by_the_spare_started_ahead(monkeypatch, language):
    monkeypatch.setenv("WARPLAB_SPARE_SANDBOX", "1")
    spare.shutdown()
    assert start_first_spare("cuda")
    result = _run_reference(find_lab("vector-add"), language)
    spare.shutdown()
    assert result.verdict == "accepted", result.message
    assert result.sandbox["warm_start"] is True


WARM_IN_A_FRESH_PROCESS = """
import sys
from pathlib import Path
import cupy
from gpu_worker.backends.device_check import compile_checks
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.measurement import kernel_cache
lab = find_lab(sys.argv[2])
print("\\n".join(kernel_cache.warm(cupy, Path(sys.argv[1]), also=(lambda cp, folder: compile_checks(cp, [lab]),))))
"""
CHECK_IN_A_FRESH_PROCESS = """
import sys
from pathlib import Path
import cupy
from gpu_worker.backends.device_check import check_once
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.measurement import kernel_cache
folder = kernel_cache.prepare(sys.argv[1], Path(sys.argv[2]))
spec = find_lab(sys.argv[3]).spec
check_once(cupy, spec, spec.sizes["cuda"][-1])
print("\\n".join(sorted(p.name for p in folder.iterdir())))
"""


def _fresh(code: str, *argv: object) -> set[str]:
    """The file names a fresh Python (CuPy's in-memory cache empty) prints."""
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    return set(done.stdout.split())


@pytest.mark.parametrize("slug", ["vector-add", "transpose"])
def test_a_seed_warmed_with_the_labs_checks_leaves_a_jobs_check_at_a_gpu_size_nothing_to_compile(tmp_path, slug):
    """Run 19: a cold job's first check came 11.5 s after its figures, NVRTC compiling `checker.compare`'s steps.

    Each step in a process of its own, as the worker does it: in one process CuPy's memory answers a second
    compilation and writes nothing to the second folder.
    """
    pytest.importorskip("cupy")
    seeded = _fresh(WARM_IN_A_FRESH_PROCESS, tmp_path / "seed", slug)
    empty = tmp_path / "empty"
    empty.mkdir()
    unseeded = _fresh(CHECK_IN_A_FRESH_PROCESS, tmp_path, empty, slug)
    assert unseeded, "the check compiled nothing without a seed: this test would prove nothing"
    compiled_by_the_job = _fresh(CHECK_IN_A_FRESH_PROCESS, tmp_path, tmp_path / "seed", slug) - seeded
    assert not compiled_by_the_job, f"the job compiled {len(compiled_by_the_job)} kernel(s) the seed lacked"


@pytest.mark.parametrize("language", ["numba", "cuda"])
def test_a_resubmitted_source_is_served_from_the_compile_cache_and_still_judged(language, tmp_path, monkeypatch):
    from gpu_worker.backends import compile_cache
    from gpu_worker.backends.cuda import CACHED_NOTE

    monkeypatch.setenv(compile_cache.CACHE_ENV, str(tmp_path))
    lab = find_lab("vector-add")
    first, second = _run_reference(lab, language), _run_reference(lab, language)
    assert first.verdict == second.verdict == "accepted", (first.message, second.message)
    kept = list((tmp_path / "compiled").glob("*.json"))
    assert len(kept) == 1
    if language == "numba":  # the compile process's answer: the second job compiled nothing
        assert CACHED_NOTE not in first.compile.notes and CACHED_NOTE in second.compile.notes
    else:  # NVRTC still builds the binary it launches; the listing (NVRTC again, ptxas, nvdisasm) is kept
        assert second.compile.sass_excerpt and second.compile.sass_excerpt == first.compile.sass_excerpt
    assert second.compile.registers == first.compile.registers  # the loaded binary's, in both
