"""The sandboxed child: compile the learner's kernel, run it on fresh inputs, send the outputs back.

Started by `gpu_worker.isolation.sandbox` as `python -m gpu_worker.isolation.child REQUEST_FD MESSAGE_FD`.
It reads the request (plain JSON) from one pipe, switches to uid 65534 when
started as root, and writes messages to the other pipe (see `gpu_worker.isolation.wire`):
`hello`, then `compiled` or a verdict (`compile_error`, `rejected`,
`runtime_error`), then one `outputs` per size (with the output arrays; on a GPU
`checked` instead, and every size is checked before the first is timed, then
each size's `timing`: `_Child._judge`), then `not_run` or `finished`, after
a `listing` with the SASS (and on the GPU the PTX) for reading: disassembling
costs more than compiling, so the compile report and the occupancy it gives go
out first. With `"listing_after_verdict"` (the CPU tier) `finished` comes
before the `listing`, so the verdict does not wait for it.
It never judges the outputs: the engine does.

With `"profile": {"index": i}` in the request (`gpu_worker.profiling`, the child
then runs under Nsight Compute) it launches size i once, under the per-GPU
lock, and sends `profiled` instead of outputs, memory reports or timings.

The learner's code runs in this process, so it could write to the message
pipe too; the engine validates every message and checks outputs it computed
itself, so a forged message can at worst fail the learner's own job. Copies of
this process made by a learner's `fork` exit at once instead of talking.

Started as `... REQUEST_FD MESSAGE_FD --spare BACKEND CPU_SECONDS` it is a
spare (see `gpu_worker.isolation.spare`): it imports its backend first, sends `ready`,
and only then blocks reading the request.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import math
import os
import resource
import select
import sys
import tempfile
import threading
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from gpu_worker.isolation.wire import MessageWriter


def _read_request(fd: int) -> dict[str, Any]:
    chunks = []
    with os.fdopen(fd, "rb") as pipe:
        while chunk := pipe.read(1 << 16):
            chunks.append(chunk)
    return json.loads(b"".join(chunks))


def _drop_privileges(uid: int | None, gid: int | None) -> None:
    if uid is None or os.getuid() != 0:
        return
    from gpu_worker.measurement import kernel_cache

    kernel_cache.give_to(uid, gid or uid)  # a spare's CuPy cache, made as root before the job
    os.setgroups([])
    os.setresgid(gid or uid, gid or uid, gid or uid)
    os.setresuid(uid, uid, uid)  # from root to non-root: the kernel clears every capability
    if os.getuid() != uid or os.geteuid() != uid:
        raise RuntimeError("could not switch to the sandbox user")


def _private_workdir() -> Path:
    """A fresh folder for this job's files and caches (under bwrap's private /tmp; on the host /tmp without it)."""
    workdir = Path(tempfile.mkdtemp(prefix="job-"))
    for name, sub in (("HOME", ""), ("TMPDIR", "tmp"), ("NUMBA_CACHE_DIR", "numba-cache"), ("CUDA_CACHE_PATH", "nv")):
        folder = workdir / sub
        folder.mkdir(exist_ok=True)
        os.environ[name] = str(folder)
    tempfile.tempdir = os.environ["TMPDIR"]
    return workdir


class _Child:
    def __init__(self, writer: MessageWriter, request: dict[str, Any]):
        self.writer = writer
        self.request = request
        self.pid = os.getpid()
        self.workdir = _private_workdir()

    def send(self, message: dict[str, Any], arrays: dict[str, Any] | None = None) -> None:
        self.leave_if_forked()
        self.writer.send(message, arrays)

    def send_listing(self, compiled: Any) -> None:
        """What the backend left out of the compile report to send it sooner (the SASS), once, as `listing`."""
        listing, compiled.listing = compiled.listing, None
        if listing is not None:
            self.send({"type": "listing", **listing()})

    def leave_if_forked(self) -> None:
        if os.getpid() != self.pid:
            os._exit(0)

    def _learner_error(self, exc: Any, compiled: Any, index: int) -> None:
        """A size's fault in the learner's kernel: the listing (when the compile made one) and the verdict."""
        self.leave_if_forked()
        if compiled is not None:
            self.send_listing(compiled)
        diagnostics = [d.model_dump() for d in exc.diagnostics]
        self.send({"type": exc.verdict, "message": exc.message, "diagnostics": diagnostics, "index": index})

    def _check_size(
        self,
        backend: Any,
        compiled: Any,
        index: int,
        run: dict[str, Any],
        args: list[Any],
        phases: dict[str, float],
        profile: Any = None,
    ) -> Any:
        """One size's correctness work, inside whatever GPU lock the caller holds: its inputs, the checked launch,
        its checks (or outputs) and memory report sent; where it will be timed, its occupancy (sent) and the timed
        launches' own input sets prepared on the device (`prepare_timed`), which it returns (else None)."""
        from gpu_worker.exercise.inputs import make_arguments
        from gpu_worker.exercise.launch import LaunchConfig

        check = _check_spec(self.request, args, run) if profile is None else None
        # judged on the device, the inputs are born there too; otherwise the engine's host formulas
        draw = backend.make_arguments if check is not None and hasattr(backend, "make_arguments") else None
        config = LaunchConfig(tuple(run["grid"]), tuple(run["block"]), run.get("shared_bytes", 0))
        clock = time.perf_counter()
        values = (draw or make_arguments)(args, run["sizes"], run["seed"])
        phases["inputs"] = time.perf_counter() - clock
        clock = time.perf_counter()
        checks = backend.launch(compiled.handle, [values[a.name] for a in args], config, check)
        phases["launch_and_check"] = time.perf_counter() - clock
        if profile is not None:
            return None
        if checks is not None:  # judged on the device by this process, which never ran learner code
            self.send({"type": "checked", "index": index, "checks": [c.model_dump() for c in checks]})
        else:
            outputs = {a.name: values[a.name] for a in args if a.role == "out"}
            self.send({"type": "outputs", "index": index}, outputs)
        memory = backend.take_memory_report() if hasattr(backend, "take_memory_report") else None
        if memory is not None:
            self.send({"type": "memory", "index": index, "memory": memory})
        if not (self.request.get("measure") and hasattr(backend, "time")):
            return None
        clock = time.perf_counter()
        occupancy = backend.occupancy(compiled.handle, config)
        self.send({"type": "occupancy", "index": index, "occupancy": occupancy})
        phases["occupancy"] = time.perf_counter() - clock
        clock = time.perf_counter()
        timed = [
            [(draw or make_arguments)(args, run["sizes"], seed)[a.name] for a in args]
            for seed in run.get("timed_seeds") or []
        ]
        prepared = backend.prepare_timed(timed, check)
        phases["timed_inputs"] = time.perf_counter() - clock
        return prepared

    def _judge(
        self, backend: Any, compiled: Any, group: list[tuple[int, dict[str, Any]]], args: list[Any], profile: Any
    ) -> bool:
        """Check a group of sizes, then time them (`_groups`); False once a size's error has ended the job.

        Three holds of the GPU lock a job where each size took three (nine, each queued behind the other jobs'
        holds: run 29, 0.56 s a job waiting for the timing lock and 0.67 s for the shared kind, of 2.4 s): every
        size's correctness work in one hold of the shared kind (`_correctness`), every size's timed launches in
        one hold of the exclusive kind (`backend.alone`), and what those launches left (the guards' read-backs,
        the timed outputs' comparisons) in one more of the shared kind. The device's state is read around the
        exclusive hold, outside it. A profiled launch takes the exclusive kind around its size instead, and is
        not timed.
        """
        from gpu_worker.backends.base import LearnerError

        prepared: dict[int, Any] = {}
        phases: dict[int, dict[str, float]] = {index: {} for index, _ in group}
        try:
            with _correctness(backend, profile):
                for index, run in group:
                    with _gpu_lock(backend, profile):
                        prepared[index] = self._check_size(backend, compiled, index, run, args, phases[index], profile)
        except LearnerError as exc:
            self._learner_error(exc, compiled, index)
            return False
        if profile is not None:  # the profiler has what it came for; no outputs, no timing
            for index, _ in group:
                self.send({"type": "profiled", "index": index})
            return True
        if not (self.request.get("measure") and hasattr(backend, "time")):
            return True
        timings: list[tuple[int, dict[str, Any]]] = []
        try:
            _time_group(backend, group, prepared, phases, timings)
        except _SizeFault as fault:
            self._send_timings(timings)  # the sizes timed before the fault, then the fault
            self._learner_error(fault.error, None, fault.index)
            return False
        self._send_timings(timings)
        return True

    def _send_timings(self, timings: list[tuple[int, dict[str, Any]]]) -> None:
        for index, summary in timings:
            self.send_timing(index, summary)

    def send_timing(self, index: int, summary: dict[str, Any]) -> None:
        """A size's timing, after the checks of what its timed launches left."""
        timed_checks = summary.pop("checks", None)
        if timed_checks is not None:
            self.send({"type": "checked", "index": index, "phase": "timed", "checks": timed_checks})
        self.send({"type": "timing", "index": index, "timing": summary})

    def run(self) -> None:
        from gpu_worker.backends import get_backend
        from gpu_worker.backends.base import LearnerError
        from gpu_worker.protocol import ArgSpec

        request = self.request
        args = [ArgSpec.model_validate(a) for a in request["args"]]
        backend = get_backend(request["backend"])
        workdir = self.workdir
        try:
            cached = request.get("cached") or {}  # the engine's compile cache, for this very source (cuda only)
            try:
                compiled = backend.compile(
                    request["language"],
                    request["source"],
                    request["entry"],
                    args,
                    workdir,
                    request.get("triton"),
                    **({"cached": cached["answer"]} if cached.get("answer") else {}),
                )
            except LearnerError as exc:
                self.leave_if_forked()
                info = exc.compile_info.model_dump() if exc.compile_info else None
                diagnostics = [d.model_dump() for d in exc.diagnostics]
                self.send({"type": exc.verdict, "message": exc.message, "diagnostics": diagnostics, "compile": info})
                return
            self.send({"type": "compiled", "compile": compiled.info.model_dump(), "ptx": compiled.ptx})
            if compiled.answer is not None:  # for the engine to keep: the next job of this source compiles nothing
                self.send({"type": "compile_answer", "answer": compiled.answer})
            if compiled.handle is None:
                self.send_listing(compiled)
                self.send({"type": "not_run", "message": compiled.not_run_reason})
                return
            profile = request.get("profile")
            reading = None
            listed = cached.get("listing") if profile is None else None  # this source's listing, made by an earlier job
            if listed is not None:
                compiled.listing = None  # the CPU tier's nvdisasm, started at the compile, is not waited for
            if (
                listed is None
                and profile is None
                and compiled.listing is None
                and request.get("measure")
                and hasattr(backend, "listing")
            ):
                # PTX and SASS for reading (NVRTC again, ptxas, nvdisasm: CPU work and subprocesses), made
                # beside the launches instead of after them: it held every CUDA C++ job 0.7 s (run 20)
                reading = _beside(backend.listing, compiled.handle, request["source"], workdir)
            runs = list(enumerate(request["runs"]))
            if profile is not None:
                runs = [(i, r) for i, r in runs if i == int(profile["index"])]
            for group in _groups(runs):
                if not self._judge(backend, compiled, group, args, profile):
                    return
            if profile is None and compiled.listing is not None and request.get("listing_after_verdict"):
                # the CPU tier: nvdisasm, started at the compile, takes longer than the launches, so the verdict
                # goes first (the output written so far with it) and the SASS after it (`engine._EarlyVerdict`)
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                self.send({"type": "finished", "listing_follows": True})
                self.send_listing(compiled)
                return
            if profile is None and compiled.listing is not None:
                self.send_listing(compiled)
            elif reading is not None:
                self.send({"type": "listing", **_listing_of(reading)})
            elif listed is not None:
                self.send({"type": "listing", **listed})
            self.send({"type": "finished"})
        finally:
            self.leave_if_forked()
            backend.close()


LISTING_WAIT_S = 30.0


def _beside(work: Any, *args: Any) -> concurrent.futures.Future[Any]:
    """`work(*args)` on a daemon thread (an early verdict never waits for it to end), as a future."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(work(*args))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="listing", daemon=True).start()
    return future


def _listing_of(reading: concurrent.futures.Future[dict[str, Any]]) -> dict[str, Any]:
    """The listing made beside the launches; a note instead when it failed or is still not done."""
    try:
        return reading.result(timeout=LISTING_WAIT_S)
    except concurrent.futures.TimeoutError:
        return {"ptx_excerpt": None, "sass_excerpt": None, "notes": [f"no listing: not done in {LISTING_WAIT_S:.0f} s"]}
    except Exception as exc:  # a courtesy: the job already ran and was judged
        return {"ptx_excerpt": None, "sass_excerpt": None, "notes": [f"no listing: {exc}"[:300]]}


def _time_group(
    backend: Any,
    group: list[tuple[int, dict[str, Any]]],
    prepared: dict[int, Any],
    phases: dict[int, dict[str, float]],
    timings: list[tuple[int, dict[str, Any]]],
) -> None:
    """Every size's timed launches in one exclusive hold, then what they left judged in one shared hold; each
    size's summary appended to `timings` as it is made (a fault, `_SizeFault`, leaves the ones before it)."""
    before = backend.device_state()
    launched = []
    with backend.alone() as waited:
        for index, run in group:
            clock = time.monotonic()
            with _SizeFault.at(index):
                done = backend.time_launches(prepared.pop(index), budget_s=run.get("gpu_budget_s"))
            launched.append((index, done, time.monotonic() - clock))
    states = [before, backend.device_state()]
    with _correctness(backend, None):
        for index, done, held in launched:
            clock = time.perf_counter()
            with _SizeFault.at(index):
                summary = backend.finish_timing(done, states)
            phases[index]["timed_launches"] = held
            phases[index]["timed_checks"] = time.perf_counter() - clock
            # the block's wait is the first size's; each size held the GPU from its start to the next's, of
            # which its launches (warm-up to last sample) are the part the harness counts itself
            summary["launches_held_seconds"] = summary["lock_held_seconds"]
            summary["lock_wait_seconds"] = round(waited if not timings else 0.0, 4)
            summary["lock_held_seconds"] = round(held, 4)
            # where this size's wall time went, for the benchmarks (the measuring process's clock)
            summary["host_phases_s"] = {k: round(v, 4) for k, v in phases[index].items()}
            timings.append((index, summary))


class _SizeFault(Exception):
    """A learner's fault (`LearnerError`) at one size of a group being timed: the error and that size's index."""

    def __init__(self, error: Exception, index: int):
        super().__init__(str(error))
        self.error, self.index = error, index

    @staticmethod
    @contextlib.contextmanager
    def at(index: int) -> Any:
        from gpu_worker.backends.base import LearnerError

        try:
            yield
        except LearnerError as exc:
            raise _SizeFault(exc, index) from None


def _groups(runs: list[tuple[int, dict[str, Any]]]) -> list[list[tuple[int, dict[str, Any]]]]:
    """The job's sizes as one group, then each block-size sweep point as a group of its own: a sweep point's
    fault ends the curve, never the sizes' verdict, so they are all checked and timed before any point is."""
    from gpu_worker.exercise.plan import is_sweep

    sizes = [(i, r) for i, r in runs if not is_sweep(r)]
    return ([sizes] if sizes else []) + [[(i, r)] for i, r in runs if is_sweep(r)]


def _check_spec(request: dict[str, Any], args: list[Any], run: dict[str, Any]) -> Any:
    """What the engine asked this process to judge on the device (`cuda` only), or None."""
    spec = request.get("check")
    if not spec:
        return None
    from gpu_worker.backends.device_check import CheckSpec
    from gpu_worker.protocol import Tolerance

    tolerance = Tolerance.model_validate(spec["tolerance"])
    return CheckSpec(args=args, expected=dict(spec["expected"]), tolerance=tolerance, sizes=dict(run["sizes"]))


def _gpu_lock(backend: Any, profile: Any) -> contextlib.AbstractContextManager[float]:
    """The per-GPU lock around a profiled launch, so no timed run shares the GPU with the profiler's replays."""
    from gpu_worker.measurement.gpu_lock import timing_lock

    uuid = getattr(backend, "uuid", None)
    return timing_lock(uuid) if uuid and profile is not None else contextlib.nullcontext(0.0)


def _correctness(backend: Any, profile: Any) -> contextlib.AbstractContextManager[Any]:
    """A size's correctness work in one hold of the GPU lock's shared kind (`CudaBackend.correctness`); nothing
    for a backend without a GPU, or for a profiled launch (which holds the exclusive kind)."""
    if profile is not None or not hasattr(backend, "correctness"):
        return contextlib.nullcontext()
    return backend.correctness()


WARM_UP_CPU_S: dict[str, float] = {}  # a spare's CPU seconds by warm-up step (this process's own), for `hello`
STARTED_STEP = "process start"
# this process's CPU in none of the steps, up to `hello`: its threads' (the CUDA driver's among them) while it
# waited, and the hand-over; with the steps it is the process's whole count, so the sandbox's other processes
# (the compile process, bwrap) are the hand-over's tree count less these
OUTSIDE_STEP = "outside the steps"


@contextlib.contextmanager
def _step(name: str) -> Any:
    """Count this process's CPU seconds in the block as the warm-up step `name` (`WARM_UP_CPU_S`)."""
    clock = time.process_time()
    try:
        yield
    finally:
        WARM_UP_CPU_S[name] = round(WARM_UP_CPU_S.get(name, 0.0) + time.process_time() - clock, 4)


def _warm_up(backend: str, compiler: bool = True) -> str:
    """A spare's imports (and, for cuda, its CUDA context): done before its job's request arrives; with
    `compiler`, the learner's compile process started warm too (`spare.wants_compiler` decides).

    Returns what failed, in words ('' when nothing did): the job then does it itself, and shows any
    real fault; the worker logs the spare's problem, which would otherwise go unseen.
    """
    with _step("engine imports"):
        import gpu_worker.backends.base  # noqa: F401
        import gpu_worker.exercise.inputs  # noqa: F401
        import gpu_worker.exercise.launch  # noqa: F401
        import gpu_worker.protocol  # noqa: F401

    if backend == "sim":
        # Not Numba's simulator any more (the executor runs every kernel): its import, the heaviest of the
        # warm-up, took the CPU from the job running beside it on the CPU tier's 2 cores.
        with _step("backend imports"):
            import gpu_worker.backends.sim  # noqa: F401
            import gpu_worker.ptx.executor  # noqa: F401
            from gpu_worker.backends import compile_server

        if compiler:
            with _step("compile process started"):
                compile_server.start_spare()  # the real compiler, warm, in a process of its own
    elif backend == "cuda":
        try:
            with _step("backend imports"):
                from gpu_worker.measurement import kernel_cache

                kernel_cache.prepare()  # before CuPy is imported: its cache backend is built once per process
                import gpu_worker.backends.cuda  # noqa: F401
                from gpu_worker.backends import compile_server

            if compiler:
                with _step("compile process started"):
                    compile_server.start_spare()  # the learner's compile process, warm; it starts while CUDA does
            with _step("backend imports"):
                import cupy
            with _step("CUDA context"):
                cupy.cuda.runtime.free(0)  # creates the device's primary context
            with _step("timing harness"):
                from gpu_worker.measurement.timing import compile_harness

                compile_harness(cupy)  # our own kernel, before any learner's code is in this process
        except Exception as exc:
            return "".join(traceback.format_exception_only(type(exc), exc)).strip()[:500]
    return ""


def _become_spare(argv: list[str], writer: MessageWriter, request_fd: int) -> list[str]:
    """Import what the job will need and say `ready`; then, on a GPU, rehearse the job's correctness work until
    its request comes (`backends.rehearsal`); keep only the job's CPU seconds from there on.

    argv: BACKEND CPU_SECONDS [no-compiler] [rehearse=JSON]. Returns what the rehearsal could not warm, for the
    job's `hello` (the worker logs it)."""
    backend, cpu_seconds, options = argv[0], int(argv[1]), argv[2:]
    # this process's CPU before the first step: bwrap's set-up in it, the interpreter's start, this module's imports
    WARM_UP_CPU_S[STARTED_STEP] = round(time.process_time(), 4)
    problem = _warm_up(backend, compiler="no-compiler" not in options)
    writer.send({"type": "ready", **({"problem": problem} if problem else {})})
    problems: list[str] = []
    if backend == "cuda" and not problem:
        described = next((o.partition("=")[2] for o in options if o.startswith("rehearse=")), None)
        with _step("rehearsal"):
            problems = _rehearse(described, request_fd)
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit = math.ceil(used.ru_utime + used.ru_stime) + cpu_seconds
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or limit < hard:
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))  # lowering needs no privilege
    return problems


def _rehearse(described: str | None, request_fd: int) -> list[str]:
    """The job's `CudaBackend`, made now and kept for it, and the rehearsal of the lab the worker last served,
    step by step until the request is readable."""
    from gpu_worker.backends import get_backend, keep, rehearsal

    def interrupted() -> bool:
        return bool(select.select([request_fd], [], [], 0)[0])

    said = io.StringIO()  # what the rehearsal writes (a warning) would otherwise reach the job's own output
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            warnings.simplefilter("always")
            backend = get_backend("cuda")
            keep(backend)
            problems = rehearsal.rehearse(backend, rehearsal.parse(described) if described else None, interrupted)
    except Exception as exc:  # the job does it all itself, as without a rehearsal
        problems = ["".join(traceback.format_exception_only(type(exc), exc)).strip()[:300]]
    return problems + ([f"it wrote: {said.getvalue()[:300]}"] if said.getvalue() else [])


PROFILE_ENV = "WARPLAB_CHILD_PROFILE"  # "N": the job's N costliest functions by own CPU, printed to its output


def _profiled(work: Any) -> None:
    """`work()`, under cProfile when the worker asks (`PROFILE_ENV`, a benchmark's switch: bench/child_profile.py);
    the profile is printed to stderr, which is the job's output."""
    top = os.environ.get(PROFILE_ENV, "")
    if not top.isdigit():
        work()
        return
    import cProfile
    import pstats

    profile = cProfile.Profile(time.process_time)  # CPU seconds, not the wall's waits on the GPU or the lock
    try:
        profile.runcall(work)
    finally:
        print(f"--- the child's profile (CPU seconds, {PROFILE_ENV}={top}) ---", file=sys.stderr)
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(int(top))
        pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(int(top))


def main(argv: list[str]) -> int:
    request_fd, message_fd = int(argv[0]), int(argv[1])
    os.set_inheritable(message_fd, False)  # compilers and learners' subprocesses do not get it
    writer = MessageWriter(message_fd)
    try:
        warming: list[str] = []
        if argv[2:3] == ["--spare"]:  # a spare (gpu_worker.isolation.spare): warm up, then wait for the request
            warming = _become_spare(argv[3:], writer, request_fd)
        request = _read_request(request_fd)
        if request.get("gpu_lock_fd") is not None:  # the worker's per-GPU timing lock, inherited (gpu_lock.py)
            os.environ["WARPLAB_GPU_LOCK_FD"] = str(int(request["gpu_lock_fd"]))
        if request.get("module_rules") is False:  # the engine's own choice (sandbox tests), never the learner's
            from gpu_worker.backends.learner_module import UNCHECKED_ENV

            os.environ[UNCHECKED_ENV] = "1"
        _drop_privileges(request.get("drop_uid"), request.get("drop_gid"))
        if WARM_UP_CPU_S:
            WARM_UP_CPU_S[OUTSIDE_STEP] = round(max(0.0, time.process_time() - sum(WARM_UP_CPU_S.values())), 4)
        hello = {"type": "hello", "pid": os.getpid(), "uid": os.getuid(), "gid": os.getgid()}
        hello.update({"rehearsal_problems": warming} if warming else {})
        writer.send({**hello, **({"warm_up_cpu_s": WARM_UP_CPU_S} if WARM_UP_CPU_S else {})})
        child = _Child(writer, request)
        _profiled(child.run)
    except BaseException as exc:  # our failure, not the learner's: say so plainly
        if "child" in locals():
            child.leave_if_forked()
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:  # where in our code, for whoever reads the worker's log
            detail += f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})"
        with contextlib.suppress(OSError):
            writer.send({"type": "error", "message": f"the job's child process failed: {detail}"[:2000]})
        return 1
    return 0


def _leave(code: int) -> None:
    """Exit without Python's teardown: the engine waits for this process to end, and with Numba's simulator
    loaded the teardown took longer than the kernel's run. Every message is already written (`os.write`);
    what the learner printed is flushed first."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    _leave(main(sys.argv[1:]))
