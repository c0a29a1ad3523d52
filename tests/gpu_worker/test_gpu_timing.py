"""The timing harness against CuPy's own benchmark and Triton's do_bench, on a real GPU."""

from __future__ import annotations

import pytest

from gpu_worker.measurement.timing import TimingConfig, measure

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def copy_launch():
    import cupy as cp

    nbytes = 1 << 30
    src = cp.random.random(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)

    def launch(stream):
        cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, stream.ptr)

    return launch


def test_the_median_matches_cupyx_benchmark_for_a_large_copy(copy_launch):
    import cupy as cp
    import numpy as np
    from cupyx.profiler import benchmark

    ours = measure(copy_launch, config=TimingConfig(flush=False))["median_ms"]
    stream = cp.cuda.get_current_stream()
    theirs = benchmark(lambda: copy_launch(stream), n_repeat=50, n_warmup=10).gpu_times[0]
    theirs_ms = float(np.median(theirs)) * 1000.0
    # cupyx synchronises after every repeat, so each of its samples also holds the launch latency
    # (about 10 us, seen on an H200: 0.5046 ms ours, 0.5166 ms theirs); ours hides it behind a blocking kernel.
    assert 0.95 * theirs_ms <= ours <= 1.005 * theirs_ms


def test_the_median_matches_triton_do_bench_within_one_percent(copy_launch):
    torch = pytest.importorskip("torch")
    triton_testing = pytest.importorskip("triton.testing")
    import cupy as cp

    ext = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    theirs = triton_testing.do_bench(lambda: copy_launch(ext), return_mode="median")
    ours = measure(copy_launch)["median_ms"]
    assert ours == pytest.approx(theirs, rel=0.01)


def test_a_small_kernel_gets_a_graph_replay_number():
    import cupy as cp

    n = 1 << 16
    a = cp.ones(n, dtype=cp.float32)

    def launch(stream):
        cp.cuda.runtime.memsetAsync(a.data.ptr, 0, n * 4, stream.ptr)

    r = measure(launch)
    assert r["hot"] and r["hot"]["summary"]["median"] < r["median_ms"]
    assert r["gpu_seconds"] <= 0.4
