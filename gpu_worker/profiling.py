"""Engine side of Nsight Compute: after an accepted cuda job, the learner's kernel once more, under ncu, in words.

`profile_job` starts a second sandboxed child, separate from the measured one
(timing never runs under the profiler): the same request with
`"profile": {"index": i}` for the largest size, so the child compiles, makes
the inputs, launches the kernel once and sends `profiled` then `finished`. The
sandbox starts it as `ncu ... python -m gpu_worker.isolation.child ...` (`wrapper`),
with ncu's install folder visible read-only and one host folder writable for
ncu's log. ncu starts as the sandbox's first user (root on a GPU worker) and
the child drops to the job's uid (gpu_worker.isolation.uid_pool) only after ncu has started it, so the log folder
(0700, the worker's) is out of the learner's reach and its counters cannot be
forged. A worker that runs unprivileged maps both to uid 65534, and there the
learner's code could write the log: the facts then mislead at worst the
learner's own job, as a forged message would.

ncu writes its CSV once the child has exited, so the run has no final message
type: it lasts until ncu ends, within min(job limit, 60 s) of wall clock. The
per-GPU lock is held by the child around the profiled launch, so no timed run
of another job shares the GPU with ncu's replays.

`profile_lanes` is a second such run for the `lanes_per_request` goal (check-labs only): the SourceCounters
section into a report in the same kind of folder, which ncu then prints on the worker, outside the sandbox,
as its source page (`gpu_worker.measurement.ncu_source`). It stays off the learner's path: where the worker
runs unprivileged the learner's code could write that report, and a report is read by ncu outside the sandbox.

Nothing here raises for the learner's faults or ncu's: the result is either the
facts of `gpu_worker.measurement.ncu.summarize` with `available: True`, or
`{available: False, reason: ...}` in a sentence. `WARPLAB_PROFILE=0` turns
profiling off.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gpu_worker.isolation import sandbox
from gpu_worker.measurement import ncu, ncu_source
from gpu_worker.measurement.gpu_lock import open_worker_lock_fd
from gpu_worker.protocol import Job, Limits
from gpu_worker.science.metrics import work_metrics

SWITCH_ENV = "WARPLAB_PROFILE"
PROFILE_WALL_SECONDS = 60.0
MESSAGE_BYTES = 16 * 1024 * 1024  # the child sends no arrays here: hello, compiled, profiled, finished
LEARNER_VERDICTS = ("compile_error", "runtime_error", "rejected", "not_run")


def enabled() -> bool:
    """Profiling runs unless `WARPLAB_PROFILE=0`."""
    return os.environ.get(SWITCH_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def unavailable(reason: str, detail: str = "", **facts: Any) -> dict[str, Any]:
    """The facts of a profile that could not be taken, with why in a sentence."""
    out: dict[str, Any] = {"available": False, "reason": reason, **facts}
    if detail:
        out["detail"] = detail[:500]
    return out


class _Messages:
    """What the profile child said: whether it launched, the learner's failure, or ours (`error`)."""

    def __init__(self) -> None:
        self.started = False
        self.profiled = False
        self.failure = ""
        self.error = ""

    def __call__(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "hello":
            self.started = True
        elif kind == "profiled":
            self.profiled = True
        elif kind in LEARNER_VERDICTS:
            self.failure = self.failure or str(message.get("message", kind))[:300]
        elif kind == "error":
            self.error = self.error or str(message.get("message", kind))[:300]


def declared_bytes(job: Job, runs: list[dict[str, Any]]) -> dict[int, float]:
    """The exercise's compulsory bytes per size (lab.yaml's work formula), where it evaluates."""
    out = {}
    for index, run in enumerate(runs):
        with contextlib.suppress(Exception):  # a formula that fails here already failed the metrics, not the job
            out[index] = float(work_metrics(job.exercise.harness.work, run["sizes"]).bytes)
    return out


def largest(runs: list[dict[str, Any]], declared: dict[int, float]) -> int:
    """The size with the most declared bytes (the last one on a tie or without formulas)."""
    if not declared:
        return len(runs) - 1
    return max(range(len(runs)), key=lambda i: (declared.get(i, -1.0), i))


def goals_index(job: Job, runs: list[dict[str, Any]], declared: dict[int, float]) -> int:
    """The GPU size the exercise's goals are judged on: the one its roof goal names, else the largest."""
    named = [
        g.size
        for g in job.exercise.harness.goals
        if g.metric == "roof_percent" and g.size is not None and g.size < len(runs)
    ]
    return named[0] if named else largest(runs, declared)


def _sim_threads(run: dict[str, Any]) -> int:
    threads = 1
    for d in run.get("block") or [1]:
        threads *= int(d)
    return threads


def profile_job(
    job: Job,
    runs: list[dict[str, Any]],
    request: dict[str, Any],
    limits: Limits,
    send: Callable[..., None],
    declared_bytes_by_index: dict[int, float] | None = None,
    *,
    device: str = "",
    backend: str = "cuda",
    index: int | None = None,
    sections: Sequence[str] = ncu.SECTIONS,
    metrics: Sequence[str] = ncu.METRICS,
) -> dict[str, Any] | None:
    """Profile the job's size `index` (default: the largest) under Nsight Compute, emit a `profile` event and return
    its facts; `sections` and `metrics` are what ncu collects.

    None (and no event) off the cuda backend or with `WARPLAB_PROFILE=0`;
    otherwise always a dict, `available: False` with a reason when ncu is
    missing, not allowed, or the kernel failed under it.
    """
    if backend != "cuda" or not runs or not enabled():
        return None
    declared = declared_bytes(job, runs) if declared_bytes_by_index is None else declared_bytes_by_index
    if index is None:
        index = largest(runs, declared)
    try:
        facts = _profile(
            job, runs, request, limits, index, declared.get(index), device, sections=sections, metrics=metrics
        )
    except Exception as exc:  # ours, never the learner's: say so and let the job's verdict stand
        facts = unavailable("the profiling run failed on the worker", f"{type(exc).__name__}: {exc}")
    facts = {**facts, "index": index, "sizes": runs[index]["sizes"]}
    send("profile", **facts)
    return facts


def profile_goals(
    job: Job,
    runs: list[dict[str, Any]],
    request: dict[str, Any],
    send: Callable[..., None],
    *,
    device: str = "",
    backend: str = "cuda",
) -> dict[str, Any] | None:
    """`profile_job` for the memory-access goals (`check-labs --ncu-goals`): their counters alone, at `goals_index`.

    One launch under ncu with no section, so the replays are few; for an exercise with a `lanes_per_request`
    goal, once those counters were taken, a second launch under the SourceCounters section alone
    (`profile_lanes`, its facts under `lanes`). The facts are read by `gpu_worker.exercise.profiled_goals`.
    """
    declared = declared_bytes(job, runs)
    index = goals_index(job, runs, declared) if runs else None
    facts = profile_job(
        job,
        runs,
        request,
        job.exercise.limits,
        send,
        declared,
        device=device,
        backend=backend,
        index=index,
        sections=(),
        metrics=ncu.GOAL_METRICS,
    )
    if facts and facts.get("available") and any(g.metric == "lanes_per_request" for g in job.exercise.harness.goals):
        facts["lanes"] = profile_lanes(job, runs, request, facts["index"], device=device, backend=backend)
    return facts


def _child_request(request: dict[str, Any], index: int) -> dict[str, Any]:
    child = {k: v for k, v in request.items() if k not in ("measure", "gpu_lock_fd")}
    child["profile"] = {"index": index}
    return child


def _run_under(
    tool: str,
    wrapper: list[str],
    folder: Path,
    request: dict[str, Any],
    runs: list[dict[str, Any]],
    limits: Limits,
    index: int,
    backend: str,
) -> tuple[_Messages, Any, float]:
    """The profile child of size `index` started under `wrapper` (an ncu command line) in the sandbox, with ncu's
    install folder readable and `folder` writable: what the child said, the sandbox's run and its wall limit."""
    child_request = _child_request(request, index)
    lock_fd = open_worker_lock_fd()
    if lock_fd is not None:
        child_request["gpu_lock_fd"] = lock_fd
    wall = min(limits.wall_seconds, PROFILE_WALL_SECONDS)
    messages = _Messages()
    try:
        run = sandbox.run_sandboxed(
            child_request,
            limits.model_copy(update={"wall_seconds": wall}),
            backend,
            messages,
            extra_processes=32 if backend == "cuda" else _sim_threads(runs[index]) + 32,
            inherit_fds=(lock_fd,) if lock_fd is not None else (),
            max_message_bytes=MESSAGE_BYTES,
            wrapper=wrapper,
            read_only=(ncu.install_dir(tool),),
            writable=(folder,),
        )
    finally:
        if lock_fd is not None:
            os.close(lock_fd)
    return messages, run, wall


def _failed(messages: _Messages, log: str, run: Any, wall: float, source: str) -> dict[str, Any] | None:
    """Why a run under ncu gave nothing to read (the learner's kernel, ncu, the child, the clock), or None."""
    if messages.failure:
        return unavailable(f"your kernel failed under the profiler: {messages.failure}", source=source)
    try:
        ncu.check_errors(log)  # ncu's own errors first: they explain the rest (a permission, a busy GPU)
    except ncu.NcuError as exc:
        if "==ERROR==" in log or messages.started:
            return unavailable(exc.reason, exc.detail, source=source)
    if messages.error and not messages.profiled:
        return unavailable("the profiling run failed on the worker", messages.error, source=source)
    if not messages.started:  # the child never spoke: it could not start (or lost its pipes) under ncu
        detail = "\n".join([*log.strip().splitlines()[-3:], run.output[-400:]])
        return unavailable("the profiled child did not start under Nsight Compute", detail, source=source)
    if run.timed_out and not log.strip():
        return unavailable(f"the profiling run took longer than {wall:g} s and was stopped", source=source)
    return None


def _found(device: str) -> tuple[str, str] | dict[str, Any]:
    """ncu's path and the facts' source ("Nsight Compute <version> on <GPU>"), or why there is none."""
    tool = ncu.find_ncu()
    if tool is None:
        return unavailable("Nsight Compute is not installed on this worker")
    return tool, f"Nsight Compute {ncu.version(tool) or '(version unknown)'} on {device or 'this GPU'}"


def _label(job: Job) -> str:
    """The name a kept copy of ncu's output goes by (`ncu.keep_copy`)."""
    return f"{job.exercise.slug}-{job.exercise.language}-{job.submission_id}"


def _profile(
    job: Job,
    runs: list[dict[str, Any]],
    request: dict[str, Any],
    limits: Limits,
    index: int,
    declared: float | None,
    device: str,
    backend: str = "cuda",  # the sandbox's backend; the CPU tests run this path on the simulator
    *,
    sections: Sequence[str] = ncu.SECTIONS,
    metrics: Sequence[str] = ncu.METRICS,
) -> dict[str, Any]:
    found = _found(device)
    if isinstance(found, dict):
        return found
    tool, source = found
    entry = job.exercise.entry
    folder = Path(tempfile.mkdtemp(prefix="warplab-ncu-"))  # 0700 and the worker's: not the learner's to write
    log = folder / "ncu.csv"
    wrapper = ncu.command(tool, entry, log, sections=sections, metrics=metrics)
    try:
        messages, run, wall = _run_under(tool, wrapper, folder, request, runs, limits, index, backend)
        text = log.read_text(errors="replace") if log.exists() else ""
        ncu.keep_copy(log, _label(job))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    failed = _failed(messages, text, run, wall, source)
    if failed is not None:
        return failed
    try:
        facts = ncu.parse_log(text, entry)
    except ncu.NcuError as exc:
        return unavailable(exc.reason, exc.detail or run.output[-500:], source=source)
    facts["source"] = source
    facts["declared_bytes"] = declared
    facts["excess_traffic"] = ncu.excess_traffic(facts.get("dram_bytes"), declared)
    if facts["excess_traffic"]:
        facts["explanations"] = [*facts["explanations"], facts["excess_traffic"]]
    return facts


def profile_lanes(
    job: Job,
    runs: list[dict[str, Any]],
    request: dict[str, Any],
    index: int,
    *,
    device: str = "",
    backend: str = "cuda",
) -> dict[str, Any]:
    """Size `index` once more under ncu's SourceCounters, alone: each memory instruction's active lanes
    (`gpu_worker.measurement.ncu_source`), as `{available: True, source, sites}` or why not in a sentence.

    Its own ncu run, so a section or page this ncu lacks leaves the other goals' counters whole; never raises.
    """
    try:
        return _lanes(job, runs, request, index, device, backend)
    except Exception as exc:  # ours, never the learner's: said in the facts, the other goals stand
        return unavailable("the source-counter run failed on the worker", f"{type(exc).__name__}: {exc}")


def _lanes(
    job: Job, runs: list[dict[str, Any]], request: dict[str, Any], index: int, device: str, backend: str
) -> dict[str, Any]:
    found = _found(device)
    if isinstance(found, dict):
        return found
    tool, source = found
    folder = Path(tempfile.mkdtemp(prefix="warplab-ncu-lanes-"))
    log = folder / "ncu.log"
    entry = job.exercise.entry
    wrapper = ncu_source.command(tool, entry, folder / "lanes", log)
    try:
        messages, run, wall = _run_under(tool, wrapper, folder, request, runs, job.exercise.limits, index, backend)
        text = log.read_text(errors="replace") if log.exists() else ""
        failed = _failed(messages, text, run, wall, source)
        if failed is not None:
            return failed
        report = folder / "lanes.ncu-rep"
        if not report.exists():
            return unavailable("Nsight Compute wrote no report of the source counters", text[-400:], source=source)
        page = ncu_source.read_page(tool, report)
        (folder / "source.csv").write_text(page)
        ncu.keep_copy(folder / "source.csv", f"{_label(job)}-source")
        sites = ncu_source.memory_sites(ncu_source.parse_page(page, entry))
    except ncu.NcuError as exc:
        return unavailable(exc.reason, exc.detail, source=source)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"available": True, "source": source, "sites": sites}
