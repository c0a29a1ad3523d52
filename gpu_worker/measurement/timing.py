"""The timing harness: CUDA events around each launch, cold (L2 flushed) and hot (graph replay) numbers.

`measure(launch, ...)` takes a callable that enqueues one launch of the
kernel on a given CuPy stream and returns a plain dict:

- warm-up first, until a few milliseconds of GPU time have run (module load,
  first-touch and clock ramp stay out of the numbers); a process that timed
  a moment ago (the job's previous size) needs only a few first-touch launches;
- "cold": per sample, a write of twice the L2's size (outside the events)
  flushes the cache, then start event, launch, stop event; a batch of samples
  is enqueued with no host synchronisation between them and read once at the
  end of the batch; batches repeat until the median's CI is tight
  (`stats.should_stop`) or the GPU-time budget is spent, each sized by what the
  CI still needs (samples by need: a steady kernel stops after the first 20);
- the SM clock (NVML) is read while each batch runs and after it; a batch
  whose clock fell under 75% of the default is dropped and retaken;
- "hot", for kernels under `graph_below_ms`: K launches captured in a CUDA
  graph, each replay timed with events and divided by K (launch gaps hidden,
  caches warm); K sized so a replay lasts `graph_replay_ms`, by a timed replay;
  the graph is made before the exclusive hold where it can be (`ready_graph`,
  correctness work), so the hold only replays it;
- the device state before and after, and whether another compute process
  shared the GPU (the result is then flagged, never silently reported);
- the per-GPU timing lock (`exclusive`) covers the launches alone: the state
  reads, the harness's buffers and the guard's read-back happen outside it;
  the host's seconds inside it are counted step by step (`hold_phases_s`).

The same function times CuPy `RawKernel`s and numba-cuda kernels (launched on
`cuda.external_stream(stream.ptr)`); it imports CuPy lazily so the module
loads on machines without a GPU.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from gpu_worker.measurement import gpu_lock, stats
from gpu_worker.measurement.device_info import SERIOUS_REASONS, Nvml

Launch = Callable[[Any], None]  # enqueue one launch on the given cupy.cuda.Stream


@dataclass
class TimingConfig:
    """Knobs of one measurement; the defaults are what graded runs use."""

    rule: stats.StopRule = field(default_factory=stats.StopRule)
    warmup_ms: float = 10.0  # GPU time of warm-up launches, the first time this process times
    warmup_min: int = 3
    warm_for_s: float = 1.0  # a process that timed this recently has a ramped clock and a loaded module ...
    warm_warmup_ms: float = 2.0  # ... so this much warm-up does: enough launches for the per-launch estimate
    first_batch: int = 20  # samples in the first batch; later batches are sized by what the CI still needs
    batch_ms: float = 20.0  # GPU time of one batch of samples
    batch_max: int = 200
    hold: bool = True  # enqueue each batch behind a blocking kernel (no launch gaps inside samples)
    hold_batch_max: int = 100  # samples per held batch: well inside the launch queue's depth
    flush: bool = True
    flush_factor: float = 2.0  # flush buffer = factor x L2 size
    graph_below_ms: float = 0.05  # hot (graph replay) number for kernels under 50 us
    graph_replay_ms: float = 1.0  # GPU time of one replay
    graph_max_launches: int = 2000
    hot_budget_fraction: float = 0.25  # of the rule's budget, kept for the hot number
    max_dropped_batches: int = 5
    low_clock_fraction: float = stats.LOW_CLOCK_FRACTION


class _Flusher:
    """Writes a buffer larger than the L2 so the next sample starts with a cold cache."""

    def __init__(self, cp: Any, nbytes: int):
        self.cp = cp
        self.nbytes = int(nbytes)
        self.buf = cp.empty(self.nbytes, dtype=cp.uint8) if nbytes > 0 else None
        self.value = 0

    def __call__(self, stream: Any) -> None:
        if self.buf is None:
            return
        self.value = (self.value + 1) & 0xFF
        self.cp.cuda.runtime.memsetAsync(self.buf.data.ptr, self.value, self.nbytes, stream.ptr)


HOLD_SOURCE = r"""
extern "C" __global__ void warplab_hold(volatile int* flag, unsigned long long timeout_ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (flag[0] == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) { flag[1] = 1; break; }
    }
}
"""


def compile_harness(cp: Any) -> None:
    """Compile the harness's own kernels now (CuPy memoizes them per process): a spare does it before its job."""
    from gpu_worker.measurement.launch_guard import fingerprint_kernel

    _ = cp.RawKernel(HOLD_SOURCE, "warplab_hold").kernel
    _ = fingerprint_kernel(cp).kernel


class _Hold:
    """nvbench's blocking kernel: the stream waits on a host flag while a whole batch is enqueued.

    Without it, a launch slower on the host than the kernel is on the GPU (a
    Numba launch costs tens of microseconds) lets the GPU run dry, and the gap
    between the start event and the kernel lands inside the sample. The flag
    lives in pinned host memory, which the device reads directly (unified
    addressing); the kernel gives up after `timeout_ns` so nothing can deadlock.
    """

    def __init__(self, cp: Any, timeout_ns: int = 500_000_000):
        import numpy as np

        self.cp = cp
        self.mem = cp.cuda.alloc_pinned_memory(8)
        self.flag = np.frombuffer(self.mem, dtype=np.int32, count=2)
        self.kernel = cp.RawKernel(HOLD_SOURCE, "warplab_hold")
        self.timeout_ns = timeout_ns
        self.timeouts = 0

    def engage(self, stream: Any) -> None:
        self.flag[:] = 0
        self.kernel((1,), (1,), (self.cp.uint64(self.mem.ptr), self.cp.uint64(self.timeout_ns)), stream=stream)

    def release(self) -> None:
        self.flag[0] = 1

    def check(self) -> None:
        self.timeouts += int(self.flag[1])


@dataclass
class _Harness:
    """What a measurement needs besides the kernel, made outside the lock."""

    flush: _Flusher | None
    hold: _Hold | None
    hold_error: str
    reference_clock: int | None


_KEPT: dict[tuple[int, int, int, bool], tuple[_Flusher | None, _Hold | None, str]] = {}
_LAST_TIMED_END = [-math.inf]  # time.monotonic() when this process last let go of the GPU


def _harness(cp: Any, config: TimingConfig, nvml: Nvml | None) -> _Harness:
    """The flush buffer and the blocking kernel's pinned flag (kept for the next size), the reference clock.

    Allocating them (pinned host memory, 2 x L2 of device memory, NVML reads) inside the lock made every
    holder wait on host calls that a busy host slows down (run 21). The child now times a job's sizes in one
    hold of the lock, so a later size's harness is made inside it: what can be is kept from the first (the
    L2's size, whose `cudaGetDeviceProperties` reads every attribute of the device; the reference clock).
    """
    device = cp.cuda.Device().id
    l2_bytes, reference = _device_facts(cp, device, nvml)
    nbytes = int(config.flush_factor * l2_bytes) if config.flush else 0
    key = (id(cp), device, nbytes, config.hold)
    if key not in _KEPT:
        hold, hold_error = None, ""
        if config.hold:
            try:
                hold = _Hold(cp)
            except Exception as exc:  # no pinned memory or no NVRTC: time without it, and say so
                hold_error = f"{type(exc).__name__}: {exc}"[:200]
        _KEPT[key] = (_Flusher(cp, nbytes) if nbytes else None, hold, hold_error)
    flush, hold, hold_error = _KEPT[key]
    if hold is not None:
        hold.timeouts = 0  # counted per measurement
    return _Harness(flush, hold, hold_error, reference)


_FACTS: dict[tuple[int, int, int], tuple[int, int | None]] = {}  # (cupy, device, nvml) -> (L2 bytes, reference MHz)


def _device_facts(cp: Any, device: int, nvml: Nvml | None) -> tuple[int, int | None]:
    """The device's L2 size and the clock samples are judged against, read once a process (neither changes while
    a job runs: the fleet never sets application clocks)."""
    key = (id(cp), device, id(nvml))
    if key not in _FACTS:
        l2 = int(cp.cuda.runtime.getDeviceProperties(device)["l2CacheSize"])
        _FACTS[key] = (l2, nvml.reference_clock() if nvml is not None else None)
    return _FACTS[key]


def prepare_harness(cp: Any, nvml: Nvml | None, config: TimingConfig | None = None) -> None:
    """Make the harness's kept buffers now (a spare does, before its job): the first timing finds them; a first
    CUDA graph replayed (`_first_graph`), and the stopping rule's first calls made (`_first_stats`)."""
    _harness(cp, config or TimingConfig(), nvml)
    _first_graph(cp)
    _first_stats()


def _first_stats() -> None:
    """The stopping rule's and the summary's first calls (NumPy's median and partition, the CI's ranks) made now:
    a first call's costs were paid inside the exclusive hold (6 ms for a first `summarize` on the CPU machine)."""
    samples = [1.0 + 0.001 * (i % 7) for i in range(40)]
    stats.should_stop(samples, 0.0)  # summarizes them: the median, its CI's ranks, the IQR
    stats.low_clock_mask([1.0], 1.0)


def _first_graph(cp: Any) -> None:
    """Capture, instantiate, upload and replay a graph of one empty launch of the harness's fingerprint kernel.

    A job's first hot number (graph replay) is taken inside its exclusive hold of the GPU lock; whatever a
    process's first graph costs the driver once is paid here by the spare instead, outside any lock. The replay
    runs nothing (no words to fingerprint)."""
    from gpu_worker.measurement.launch_guard import fingerprint_kernel

    kernel, stream = fingerprint_kernel(cp), cp.cuda.Stream(non_blocking=True)
    words, slot = cp.zeros(1, dtype=cp.uint32), cp.zeros(1, dtype=cp.uint64)
    stream.begin_capture()
    try:
        kernel((1,), (32,), (words, cp.uint64(0), slot), stream=stream)
    finally:
        graph = stream.end_capture()
    graph.upload(stream)
    graph.launch(stream)
    stream.synchronize()


class _HostClock:
    """Host seconds per step of one measurement inside its hold of the lock (`hold_phases_s` of the result): the
    GPU's own time is in the events; this says where the rest of the hold went (enqueueing, waiting on a batch,
    the stopping rule, the graph's capture), which a holder's wall time alone cannot."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t

    def rounded(self) -> dict[str, float]:
        return {k: round(v, 5) for k, v in self.seconds.items()}


def _events(cp: Any, n: int) -> list[Any]:
    return [cp.cuda.Event() for _ in range(n)]


def _elapsed(cp: Any, a: Any, b: Any) -> float:
    return float(cp.cuda.get_elapsed_time(a, b))


def _batch(
    cp: Any,
    launch: Launch,
    stream: Any,
    count: int,
    flush: _Flusher | None,
    nvml: Nvml | None,
    hold: _Hold | None = None,
    guard: Any = None,
    host: _HostClock | None = None,
) -> tuple[list[float], float, list[int]]:
    """`count` samples with no host sync between them; (samples ms, GPU ms spent, clock readings).

    With a `guard` (`launch_guard.LaunchGuard`) its `before` runs ahead of each sample's flush and its
    `after` behind each stop event: both outside the timed interval. `host` counts the host's enqueueing
    ("cold_enqueue") apart from its wait for the batch's end ("cold_wait").
    """
    host = host or _HostClock()
    with host.phase("cold_enqueue"):
        begin = cp.cuda.Event()
        starts, stops = _events(cp, count), _events(cp, count)
        if hold is not None:
            hold.engage(stream)
        begin.record(stream)
        try:
            for i in range(count):
                if guard is not None:
                    guard.before(stream)
                if flush is not None:
                    flush(stream)
                starts[i].record(stream)
                launch(stream)
                stops[i].record(stream)
                if guard is not None:
                    guard.after(stream)
        finally:
            if hold is not None:
                hold.release()
    clocks = []
    with host.phase("cold_wait"):
        if nvml is not None and nvml.ok:
            c = nvml.sm_clock()  # read while the batch runs
            if c:
                clocks.append(c)
        stops[-1].synchronize()
        if nvml is not None and nvml.ok:
            c = nvml.sm_clock()
            if c:
                clocks.append(c)
    with host.phase("cold_read"):
        if hold is not None:
            hold.check()
        samples = [_elapsed(cp, s, e) for s, e in zip(starts, stops, strict=True)]
        return samples, _elapsed(cp, begin, stops[-1]), clocks


def _warmup(cp: Any, launch: Launch, stream: Any, config: TimingConfig) -> tuple[float, float, int]:
    """Run until `warmup_ms` of GPU time; (estimated ms per launch, GPU ms spent, launches).

    A process that let go of the GPU less than `warm_for_s` ago (the job's previous size), or took it from
    another process's timing that recent (`gpu_lock.last_timing_end`: the clocks are the GPU's), has a ramped
    clock; its first launch loads the module: `warm_warmup_ms` do, the first touch of this size's buffers and enough
    launches for the estimate that sizes the graph replay (two launches made it 1.6 x too long for a 1 µs
    kernel, and the hot number's CV rose from 0.2 to 0.65%: run 22).
    """
    launch(stream)  # first launch: module load, lazy loading, first touch
    stream.synchronize()
    # ramped clocks are the GPU's: another process's timing a moment ago ramped them for this one too
    last = max(_LAST_TIMED_END[0], gpu_lock.last_timing_end())
    warm = time.monotonic() - last < config.warm_for_s
    target_ms = config.warm_warmup_ms if warm else config.warmup_ms
    spent, done, count, est = 0.0, 1, 1, math.inf
    while True:
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(stream)
        for _ in range(count):
            launch(stream)
        b.record(stream)
        b.synchronize()
        ms = _elapsed(cp, a, b)
        spent += ms
        done += count
        est = ms / count
        if spent >= target_ms and done >= config.warmup_min:
            return est, spent, done
        count = min(max(count * 2, 1), 1000)


def _cold(
    cp: Any,
    launch: Launch,
    stream: Any,
    est_ms: float,
    budget_ms: float,
    config: TimingConfig,
    nvml: Nvml | None,
    harness: _Harness,
    guard: Any = None,
    host: _HostClock | None = None,
) -> dict[str, Any]:
    host = host or _HostClock()
    flush, hold, hold_error, reference = harness.flush, harness.hold, harness.hold_error, harness.reference_clock
    flush_ms = 0.0
    batch_max = min(config.batch_max, config.hold_batch_max) if hold else config.batch_max
    samples: list[float] = []
    spent_ms, dropped, batches = 0.0, 0, 0
    all_clocks: list[int] = []
    reason = "noisy"
    while True:
        per_sample = est_ms + flush_ms
        with host.phase("cold_rule"):
            needed = _samples_needed(samples, config)
        count = min(needed, batch_max, int(config.batch_ms / max(per_sample, 1e-4)))
        count = max(1, min(count, config.rule.max_samples - len(samples)))
        left = budget_ms - spent_ms
        if per_sample * count > left:
            count = max(1, int(left / max(per_sample, 1e-4)))
        batch, ms, clocks = _batch(cp, launch, stream, count, flush, nvml, hold, guard, host)
        batches += 1
        spent_ms += ms
        all_clocks += clocks
        with host.phase("cold_read"):
            if flush is not None and batch:
                flush_ms = max(0.0, ms / len(batch) - stats.median(batch))
            low = bool(
                reference and clocks and stats.low_clock_mask([min(clocks)], reference, config.low_clock_fraction)[0]
            )
        if low and dropped < config.max_dropped_batches:
            dropped += 1
        else:
            samples += batch
        with host.phase("cold_rule"):
            stop, reason = stats.should_stop(samples, spent_ms / 1000.0, _budget_rule(config.rule, budget_ms))
        if stop and guard is not None and guard.count < len(guard.launches):
            continue  # each input set launched once at least, or a kernel slower than the budget (a naive
            # matmul at n = 4096, 12.6 ms on the H200) left a set's outputs poisoned and read as wrong
        if stop:
            break
    with host.phase("cold_summary"):
        s = stats.summarize(samples) if samples else None
    return {
        "summary": s.as_dict() if s else None,
        "samples_ms": samples,
        "gpu_ms": spent_ms,
        "batches": batches,
        "dropped_batches": dropped,
        "stop_reason": reason,
        "flush_bytes": flush.nbytes if flush else 0,
        "sm_clock_min_mhz": min(all_clocks) if all_clocks else None,
        "sm_clock_max_mhz": max(all_clocks) if all_clocks else None,
        "reference_clock_mhz": reference,
        "hold": hold is not None,
        "hold_timeouts": hold.timeouts if hold else 0,
        "hold_error": hold_error,
    }


def _samples_needed(samples: list[float], config: TimingConfig) -> int:
    """How many more samples the median's CI needs to reach the rule's precision (samples by need).

    The first batch is `first_batch`; after it, the CI's half-width narrows as 1/sqrt(n), so reaching
    `rel_precision` from `w` takes about n * ((w / rel_precision)^2 - 1) more (at least `min_samples`).
    """
    if len(samples) < config.rule.min_samples:
        return max(config.first_batch, config.rule.min_samples) - len(samples)
    ratio = stats.summarize(samples).rel_ci_half_width / config.rule.rel_precision
    if not math.isfinite(ratio):
        return config.rule.max_samples
    return max(config.rule.min_samples, math.ceil(len(samples) * (ratio * ratio - 1.0)))


def _budget_rule(rule: stats.StopRule, budget_ms: float) -> stats.StopRule:
    return stats.StopRule(rule.rel_precision, rule.min_samples, rule.max_samples, budget_ms / 1000.0)


def _launches_per_replay(per_launch_ms: float, config: TimingConfig) -> int:
    """K: launches in one graph so that a replay lasts `graph_replay_ms` at `per_launch_ms` a launch."""
    return int(min(config.graph_max_launches, max(10, math.ceil(config.graph_replay_ms / max(per_launch_ms, 1e-4)))))


def _capture(cp: Any, launch: Launch, stream: Any, k: int) -> tuple[Any, float]:
    """A graph of `k` launches, uploaded, replayed once to warm its first-launch costs, then once timed: (graph,
    ms of the timed replay)."""
    stream.begin_capture()
    try:
        for _ in range(k):
            launch(stream)
    finally:
        graph = stream.end_capture()
    graph.upload(stream)
    graph.launch(stream)
    a, b = cp.cuda.Event(), cp.cuda.Event()
    a.record(stream)
    graph.launch(stream)
    b.record(stream)
    b.synchronize()
    return graph, _elapsed(cp, a, b)


def _sized_graph(
    cp: Any, launch: Launch, stream: Any, est_ms: float, config: TimingConfig
) -> tuple[Any, int, float, float]:
    """A graph of K launches sized from `est_ms` a launch, then from its timed replay: one whose replay lasts under
    half of `graph_replay_ms` is captured again, K scaled to what the replay took. (graph, K, its replay's ms, the
    GPU ms the sizing replays took.)"""
    k = _launches_per_replay(est_ms, config)
    graph, replay_ms = _capture(cp, launch, stream, k)
    sizing_ms = replay_ms
    if replay_ms < 0.5 * config.graph_replay_ms and k < config.graph_max_launches:
        k = _launches_per_replay(replay_ms / k, config)
        graph, replay_ms = _capture(cp, launch, stream, k)
        sizing_ms += replay_ms
    return graph, k, replay_ms, sizing_ms


@dataclass
class ReadyGraph:
    """The hot number's graph, captured, uploaded and sized before the exclusive hold (`ready_graph`)."""

    graph: Any
    launches: int  # K
    replay_ms: float  # its sizing replay, taken beside other jobs' checks: it sizes the rounds, it is no sample
    estimate_ms: float  # the per-launch time K was first sized from
    host_s: float  # the host's seconds it took, none of them inside the exclusive hold


def _timed_each(cp: Any, launch: Launch, stream: Any, count: int) -> list[float]:
    """`count` launches (or graph replays), each between events of its own, read after one wait: ms each."""
    starts, stops = _events(cp, count), _events(cp, count)
    for i in range(count):
        starts[i].record(stream)
        launch(stream)
        stops[i].record(stream)
    stops[-1].synchronize()
    return [_elapsed(cp, a, b) for a, b in zip(starts, stops, strict=True)]


def ready_graph(launch: Launch, stream: Any, config: TimingConfig | None = None) -> ReadyGraph | None:
    """The hot number's graph made ahead, under the shared kind of the lock (correctness work): None for a kernel
    that will not want one (`graph_below_ms`), or where the capture was refused (the hold tries again and says why).

    Capturing K launches (up to 2000 enqueued into the capture, each a host launch call), instantiating and
    uploading the graph, and the replays that size K are host work and a millisecond or two of the GPU: none of it
    needs the GPU alone, and inside the exclusive hold every other job's timing waited for it. The kernel's time
    here is the fastest of a few single launches: beside other jobs' work it can only read long, which sizes K
    small, and `_hot` captures again inside the hold if a replay there comes out under half its aim.
    """
    cp = _cupy()
    config = config or TimingConfig()
    started = time.perf_counter()
    with stream:
        first = _timed_each(cp, launch, stream, 1)[0]
        if first >= 10 * config.graph_below_ms:  # a long kernel: no graph, and no more of its launches here
            return None
        est = min(_timed_each(cp, launch, stream, 8))
        if est >= config.graph_below_ms:
            return None
        try:
            graph, k, replay_ms, _ = _sized_graph(cp, launch, stream, est, config)
        except Exception:  # a refused capture (a sync inside the launch): the hold's own try reports it
            return None
    return ReadyGraph(graph, k, replay_ms, est, time.perf_counter() - started)


def _hot(
    cp: Any,
    launch: Launch,
    stream: Any,
    est_ms: float,
    budget_ms: float,
    config: TimingConfig,
    host: _HostClock | None = None,
    ready: ReadyGraph | None = None,
) -> dict[str, Any]:
    """Graph replay: K launches in a graph, replays timed, each divided by K.

    The graph is `ready`'s where one was made before the hold (`ready_graph`); else it is captured here, K sized
    from `est_ms` a launch and then from a timed replay (`_sized_graph`). The warm-up's per-launch estimate is the
    host's launch rate for a kernel of a microsecond or two (launches back to back outrun nothing), so it made
    graphs of ~118 launches that replayed in 0.2 ms where 1 ms was meant, and at 2^18 the hot median's CV over
    ten measurements was 2.3% (runs 29 and 30; target 0.5%). A ready graph whose first round here replays in
    under half of `graph_replay_ms` (sized beside other work, which can only have read the kernel long) is
    captured again here, sized by that round, and the round is not kept.
    """
    host = host or _HostClock()
    try:
        if ready is not None:
            graph, k, replay_ms, spent = ready.graph, ready.launches, ready.replay_ms, 0.0
        else:
            with host.phase("hot_capture"):  # the sizing replays' GPU time counts against the budget too
                graph, k, replay_ms, spent = _sized_graph(cp, launch, stream, est_ms, config)
    except Exception as exc:  # capture refused (e.g. a sync inside the launch): no hot number
        return {"error": f"graph capture failed: {type(exc).__name__}: {exc}"}
    captured = "before the hold" if ready is not None else "in the hold"
    before_s = ready.host_s if ready is not None else 0.0  # the host's seconds on it outside the hold
    per: list[float] = []
    rule = _budget_rule(config.rule, budget_ms)
    while True:
        n = max(5, min(50, int(10.0 / max(replay_ms, 1e-3))))  # about 10 ms of the GPU a round
        with host.phase("hot_replays"):
            replays = _timed_each(cp, graph.launch, stream, n)
        spent += sum(replays)
        if ready is not None and not per:
            ready, replay_ms = None, stats.median(replays)
            if replay_ms < 0.5 * config.graph_replay_ms and k < config.graph_max_launches:
                try:
                    with host.phase("hot_capture"):
                        graph, k, replay_ms, sizing_ms = _sized_graph(cp, launch, stream, replay_ms / k, config)
                except Exception as exc:
                    return {"error": f"graph capture failed: {type(exc).__name__}: {exc}"}
                spent += sizing_ms
                captured = "before the hold, again in it"
                continue
        per += [ms / k for ms in replays]
        with host.phase("hot_rule"):
            stop, reason = stats.should_stop(per, spent / 1000.0, rule)
        if stop:
            break
    return {
        "summary": stats.summarize(per).as_dict(),
        "launches_per_replay": k,
        "gpu_ms": spent,
        "stop_reason": reason,
        "graph_captured": captured,
        "graph_made_before_s": round(before_s, 5),
    }


def _cupy() -> Any:
    import cupy

    return cupy


def measure(
    launch: Launch,
    stream: Any = None,
    config: TimingConfig | None = None,
    nvml: Nvml | None = None,
    hot: bool | None = None,
    guard: Any = None,
    exclusive: AbstractContextManager[float] | None = None,
) -> dict[str, Any]:
    """Time one kernel at one size; see the module docstring. Times are milliseconds.

    With a `guard` (`launch_guard.LaunchGuard`) the launches are the guard's (its input sets), every cold
    sample is poisoned before and fingerprinted after, and the guard's fingerprints are read before the
    hot number is taken; its report is the result's `guard`.

    `exclusive` (the per-GPU timing lock) is held around the launches only: the device state, the harness's
    buffers and the guard's read-back happen outside it, so the next job's timing need not wait for them.
    """
    cp = _cupy()
    stream = stream or cp.cuda.Stream(non_blocking=True)
    before = nvml.state() if nvml is not None else None
    launched = launches(launch, stream, config, nvml, hot, guard, exclusive)
    guarded = read_guard(guard, stream)
    after = nvml.state() if nvml is not None else None
    return result_of(launched, [s for s in (before, after) if s is not None], guarded)


def read_guard(guard: Any, stream: Any) -> dict[str, Any] | None:
    """The guard's report (`LaunchGuard.finish`: its fingerprints read back behind the launches on `stream`), or
    None without a guard; outside the timing lock."""
    if guard is None:
        return None
    with stream:
        return guard.finish(stream)


def launches(
    launch: Launch,
    stream: Any,
    config: TimingConfig | None = None,
    nvml: Nvml | None = None,
    hot: bool | None = None,
    guard: Any = None,
    exclusive: AbstractContextManager[float] | None = None,
    graph: ReadyGraph | None = None,
) -> dict[str, Any]:
    """`measure`'s launches alone, on `stream` (warm-up, cold samples, hot replays), under `exclusive`: what
    `result_of` turns into the result once the device state is read and the guard's read-back is done
    (`guard.finish(stream)`), both outside the lock. A caller that times several sizes in one hold of the
    lock reads the state once around the hold and finishes each guard after it."""
    cp = _cupy()
    config = config or TimingConfig()
    t0 = time.perf_counter()
    host = _HostClock()
    with host.phase("harness"):
        harness = _harness(cp, config, nvml)
    if guard is not None:
        launch = guard.launch
    with stream, exclusive if exclusive is not None else contextlib.nullcontext(0.0) as waited:
        held_from = time.monotonic()
        with host.phase("warmup"):
            est_ms, warm_ms, warm_n = _warmup(cp, launch, stream, config)
        budget_ms = config.rule.gpu_budget_s * 1000.0 - warm_ms
        want_hot = hot if hot is not None else est_ms < config.graph_below_ms
        cold_budget = budget_ms * ((1.0 - config.hot_budget_fraction) if want_hot else 1.0)
        cold = _cold(cp, launch, stream, est_ms, cold_budget, config, nvml, harness, guard, host)
        if guard is not None:
            with host.phase("seal"):
                guard.seal(stream)  # the last outputs' fingerprints, queued before the hot replays rewrite them
        hot_result = None
        if want_hot:
            # a cold sample's median is the kernel's own time (the warm-up's estimate is the host's launch rate)
            per_launch = min(est_ms, (cold["summary"] or {}).get("median") or est_ms)
            hot_result = _hot(cp, launch, stream, per_launch, budget_ms - cold["gpu_ms"], config, host, graph)
        with host.phase("drain"):
            stream.synchronize()
        _LAST_TIMED_END[0] = time.monotonic()
        held = _LAST_TIMED_END[0] - held_from
    phases = host.rounded()
    # the hold's seconds no step counted (the harness's come before the hold): run 32 found 45 ms of them in a
    # job's first size, none in the later sizes, and no step to name
    phases["unaccounted"] = round(held - sum(v for k, v in host.seconds.items() if k != "harness"), 5)
    return {
        "cold": cold,
        "hot": hot_result,
        "warmup": {"launches": warm_n, "gpu_ms": warm_ms, "estimate_ms": est_ms},
        "started": t0,
        "lock_wait_seconds": waited,
        "lock_held_seconds": held,
        "hold_phases_s": phases,
    }


def result_of(launched: dict[str, Any], states: list[Any], guarded: dict[str, Any] | None) -> dict[str, Any]:
    """A measurement's result from its launches (`launches`), the device states read around them (`Nvml.state`;
    none without NVML) and its guard's report (`LaunchGuard.finish`, or None without a guard)."""
    cold, hot_result, warmup = launched["cold"], launched["hot"], launched["warmup"]
    gpu_ms = warmup["gpu_ms"] + cold["gpu_ms"] + (hot_result or {}).get("gpu_ms", 0.0)
    cold_summary = cold["summary"] or {}
    shared = any(s.other_processes for s in states)
    throttled = sorted({r for s in states for r in s.throttle_reasons if r in SERIOUS_REASONS})
    flags = []
    if shared:
        flags.append("shared_gpu")
    if throttled:
        flags.append("throttled")
    if cold["dropped_batches"]:
        flags.append("low_clock_batches_dropped")
    if cold["hold_timeouts"]:
        flags.append("host_bound_batches")  # the blocking kernel gave up: launch gaps may be in the samples
    if guarded and guarded["samples_unlike_their_set"]:
        flags.append("outputs_varied")  # some timed samples left other outputs: never ranked
    return {
        "method": "cuda-events",
        "median_ms": cold_summary.get("median"),
        "cold": cold,
        "hot": hot_result,
        "warmup": warmup,
        "gpu_seconds": gpu_ms / 1000.0,
        "wall_seconds": time.perf_counter() - launched["started"],
        "device_before": states[0].as_dict() if states else None,
        "device_after": states[-1].as_dict() if len(states) > 1 else None,
        "shared_gpu": shared,
        "flags": flags,
        "guard": guarded,
        "lock_wait_seconds": launched["lock_wait_seconds"],
        "lock_held_seconds": launched["lock_held_seconds"],
        "hold_phases_s": launched.get("hold_phases_s", {}),
    }


def brief(result: dict[str, Any]) -> dict[str, Any]:
    """The timing event's payload: the headline numbers without the raw samples."""
    cold = result["cold"]["summary"] or {}
    hot = (result.get("hot") or {}).get("summary") or {}
    return {
        "median_ms": result["median_ms"],
        "iqr_ms": cold.get("iqr"),
        "ci_ms": [cold.get("ci_low"), cold.get("ci_high")],
        "repeats": cold.get("n"),
        "stop_reason": result["cold"]["stop_reason"],
        "hot_median_ms": hot.get("median"),
        "hot_ci_ms": [hot.get("ci_low"), hot.get("ci_high")] if hot else None,
        "hot_graph_captured": (result.get("hot") or {}).get("graph_captured"),
        "gpu_seconds": result["gpu_seconds"],
        "wall_seconds": result["wall_seconds"],
        "sm_clock_mhz": [result["cold"]["sm_clock_min_mhz"], result["cold"]["sm_clock_max_mhz"]],
        "flags": result["flags"],
        "guard": result.get("guard"),
    }
