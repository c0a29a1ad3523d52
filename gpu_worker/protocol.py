"""The versioned contract between the web app and the GPU execution service.

A `Job` goes from the web to a worker, `Event`s stream back on the submission's
channel-layer group while it runs, and one `Result` document closes it
(`Outcome` numbers a job's events and ends it, the one way every job ends). Both
sides validate these models; the web side stores the result JSON as it is.
Also here, because both sides speak them: the verdicts and their labels (the
web's model choices and the frontend's labels follow `VERDICTS`), a scheduling
exercise's `PolicySpec` and a function exercise's `FunctionSpec` (they ride in the job's harness), and the heartbeat
document a worker publishes and the web's fleet pages read.
Nothing here imports Django, Celery or anything else of `gpu_worker`.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

PROTOCOL_VERSION: Literal[1] = 1
MAX_SOURCE_BYTES = 64 * 1024
RESULT_BYTES = 16 * 1024 * 1024  # a stored result (figures included); accepted runs of the labs are under 1 MB
FIRST_SEQ = 2  # a job's first event: the web emits `queued` as 0 and 1

# policy: a cluster scheduling policy in Python (module 6); triton: `@triton.jit` kernels (backends.triton_ptx);
# function: a plain Python function judged by its answers against a trusted reference (gpu_worker.answers)
Language = Literal["numba", "cuda", "triton", "policy", "function"]
Backend = Literal["sim", "cuda"]
# What ran the learner's kernel and so produced its outputs (or its fault): the engine's word, never the child's.
# `gpu`: a GPU lane; `ptx_executor`: the CPU tier's PTX executor (the learner's code not in that process);
# `numba_simulator` and `triton_interpreter`: the CPU tier's labelled fallbacks, which run the learner's code.
ExecutedBy = Literal["gpu", "ptx_executor", "numba_simulator", "triton_interpreter"]
FALLBACKS: dict[str, str] = {
    "numba_simulator": "Numba's CUDA simulator",
    "triton_interpreter": "Triton's interpreter",
}
Verdict = Literal[
    "accepted",
    "wrong_answer",
    "compile_error",
    "runtime_error",
    "timeout",
    "rejected",
    "not_run",
    "error",  # infrastructure failure (worker lost, crash outside the learner's code)
]
#: Every verdict, in the order the pages list them: the model's choices and the frontend's labels follow it.
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
#: The one label each verdict is shown with, everywhere (the page's badge, the admin, the exports).
VERDICT_LABELS: dict[Verdict, str] = {
    "accepted": "Accepted",
    "wrong_answer": "Wrong answer",
    "compile_error": "Compile error",
    "runtime_error": "Runtime error",
    "timeout": "Time limit exceeded",
    "rejected": "Rejected",
    "not_run": "Compiled, not run",
    "error": "Worker error",
}
EventType = Literal[
    "queued",
    "started",
    "compiled",
    "compile_error",
    "occupancy",
    "check",
    "timing",
    "metrics",
    "figure",
    "memory",  # sectors per request and bank conflicts from the simulator's trace (gpu_worker.science.memtrace)
    "profile",  # Nsight Compute's counters for the largest size, in words (gpu_worker.profiling)
    "log",
    "done",
    "error",
]
LANGUAGES: tuple[str, ...] = get_args(Language)
# A lab's files per language: `starter.py` (Numba), `starter.cu`, `starter.triton.py`; a policy or function lab
# offers only .py.
SOURCE_SUFFIX = {"numba": ".py", "cuda": ".cu", "triton": ".triton.py", "policy": ".py", "function": ".py"}


class Model(BaseModel):
    """Base for the contract: unknown fields are kept, so old readers survive new writers.

    Non-finite floats (a poisoned output read back as NaN) travel as the strings
    "NaN" and "Infinity": JSON has no such numbers and databases refuse them.
    """

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="strings")

    def to_wire(self) -> dict[str, Any]:
        """Plain JSON-safe data, as sent between the processes and stored."""
        return json.loads(self.model_dump_json())


class ArgSpec(Model):
    """One kernel argument: an input array, an output array or a scalar."""

    name: str
    role: Literal["in", "out", "scalar"]
    dtype: Literal["float16", "float32", "float64", "int32", "int64", "uint32"] = "float32"
    shape: list[str] = Field(default_factory=list)  # formulas of the sizes
    init: Literal["uniform", "normal", "randint", "arange"] = "uniform"
    value: str | None = None  # formula of the sizes, for scalars
    languages: list[Language] | None = None  # None: passed in every language


class LaunchSpec(Model):
    """Grid and block as formulas of the sizes; 1 to 3 dimensions."""

    block: list[str]
    grid: list[str]
    dynamic_shared_bytes: str = "0"
    # a learner's block-size sweep (GPU only): the kernel also run, checked and timed at each of these block
    # sizes of the exercise's `launch_choices`, at its largest GPU size, and drawn as a curve
    sweep_blocks: list[int] = Field(default_factory=list, max_length=16)


class LaunchChoices(Model):
    """Block sizes a learner may choose (1D): `grid` are formulas of the sizes and of `block`, the chosen size.

    The web checks the choice against `block` and sends the resolved launch as the job's `launch`.
    """

    block: list[int] = Field(min_length=1, max_length=16)
    grid: list[str] = Field(min_length=1, max_length=3)

    def launch(self, block: int, sweep: bool = False) -> LaunchSpec:
        """The job's launch for a chosen block size (which must be one of `block`); with `sweep`, every other
        block size offered is run too (on a GPU), for the curve."""
        if block not in self.block:
            raise ValueError(f"block size {block} is not one of {', '.join(map(str, self.block))}")
        others = [b for b in self.block if b != block] if sweep else []
        grid = [re.sub(r"\bblock\b", str(block), g) for g in self.grid]
        return LaunchSpec(block=[str(block)], grid=grid, sweep_blocks=others)


class TritonLaunch(Model):
    """How a Triton kernel is compiled and launched: its grid of programs and its `tl.constexpr` block sizes.

    `grid` are formulas of the sizes (programs per axis, like `triton.cdiv(n, BLOCK)` written `ceil_div(n, 1024)`);
    `constexprs` are compiled into the kernel, one value for every size (a kernel loops over what does not fit);
    each program runs as one CUDA block of `num_warps` * 32 threads.
    """

    grid: list[str] = Field(min_length=1, max_length=3)
    constexprs: dict[str, int] = Field(default_factory=dict)
    num_warps: Literal[1, 2, 4, 8, 16, 32] = 4
    num_stages: int = Field(default=3, ge=1, le=8)

    def launch(self) -> LaunchSpec:
        """The launch the engine resolves per size: the grid, and blocks of the kernel's threads."""
        return LaunchSpec(block=[str(self.num_warps * 32)], grid=list(self.grid))


class Tolerance(Model):
    rtol: float = 1e-5
    atol: float = 1e-6


class WorkSpec(Model):
    """The compulsory traffic and arithmetic of one launch, as formulas of the sizes."""

    bytes: str
    flops: str = "0"


GoalMetric = Literal[
    "sectors_per_request",
    "bank_conflict_ways",
    "lanes_per_request",
    "traffic_ratio",
    "occupancy_percent",
    "roof_percent",
]


class GoalSpec(Model):
    """What "done" means beyond correct: one measured figure against a target (judged by `gpu_worker.exercise.goals`).

    `sectors_per_request` (at most: the worst global load or store site, simulator) and `bank_conflict_ways`
    (at most: the worst shared-memory site, simulator), `lanes_per_request` (at least: the site whose warps ran
    with the fewest active lanes, simulator: a branch that splits a warp halves it) and `traffic_ratio` (at most:
    the sectors every traced request moved, in bytes, over the exercise's compulsory bytes; the simulator models no
    cache, so this counts what a kernel asks of memory) come from the memory trace; `occupancy_percent`
    (at least: the calculator's, every backend) from the compiled resources; `roof_percent` (at least: of the
    slice's calibrated roof at the kernel's intensity, at the largest timed size or at the GPU size `size` names, cuda
    backend) from the timing.
    """

    name: str = Field(min_length=1, max_length=80)
    metric: GoalMetric
    target: float
    access: Literal["load", "store", "any"] = "any"  # which sites `sectors_per_request` and `lanes_per_request` read
    space: Literal["global", "shared", "any"] = "global"  # which memory `lanes_per_request` looks at
    size: int | None = Field(default=None, ge=0)  # roof_percent: the index of the GPU size it reads; None: the largest


class SweepSpec(Model):
    """A curve across the exercise's GPU sizes: `y` measured at each against `x` (`gpu_worker.figures.sweep`)."""

    title: str
    x: str  # formula of the sizes
    # resident_warps: x is the driver's resident warps per SM at each size (blocks per SM x warps per block, as
    # the cuda backend measured it for the compiled kernel), `x` only where that is missing
    x_measured: Literal["resident_warps"] | None = None
    x_title: str
    y: Literal["ns_per", "bandwidth_pct", "gbps"]
    per: str = "1"  # for ns_per: the median time is divided by this formula of the sizes
    y_title: str
    log_x: bool = True


# --- a scheduling exercise's settings (module 6): the `policy:` block of its lab.yaml ------------------------
# Part of the contract because it travels inside the job's harness (`Harness.policy`): the web side stores and
# sends it without knowing what it means; `gpu_worker.datacenter` plays it.

BUILTIN_NAMES = ("fifo", "sjf", "gang", "easy", "tiresias", "gandiva")  # gpu_worker.datacenter.policies.BUILTINS
PREEMPTIVE_BUILTINS = ("tiresias", "gandiva")  # those whose `preemptive` is set there (a test holds the two equal)
MIG_COMPUTE_SLICES = 7  # per GPU in MIG mode (gpu_worker.datacenter.mig)
MPS_CLIENTS = 4  # jobs one GPU takes at once under MPS (gpu_worker.datacenter.mps)
Sharing = Literal["none", "mig", "mps"]
PolicyMetric = Literal["mean_jct", "p95_jct", "makespan", "utilisation", "jain", "preemptions"]
HIGHER_IS_BETTER = frozenset({"utilisation", "jain"})
METRIC_WORDS = {
    "mean_jct": "mean job completion time",
    "p95_jct": "95th-percentile job completion time",
    "makespan": "makespan",
    "utilisation": "mean GPU utilisation",
    "jain": "Jain's fairness index",
    "preemptions": "number of preemptions",
}


class TraceSpec(BaseModel):
    """One synthetic trace (`gpu_worker.datacenter.trace.synthetic_trace`)."""

    model_config = ConfigDict(extra="forbid")

    seed: int
    jobs: int = Field(150, ge=1, le=1000)
    load: float = Field(0.9, gt=0, le=3)  # offered load: GPU-minutes asked per GPU-minute the cluster has


class PolicyGoal(BaseModel):
    """Yours against a built-in's on every trace: at most `ratio` times it (at least, for higher-is-better)."""

    model_config = ConfigDict(extra="forbid")

    metric: PolicyMetric
    baseline: str  # a built-in policy's name (gpu_worker.datacenter.policies.BUILTINS)
    ratio: float = Field(1.0, gt=0)

    def met(self, yours: float, theirs: float) -> bool:
        if self.metric in HIGHER_IS_BETTER:
            return yours >= self.ratio * theirs
        return yours <= self.ratio * theirs

    def words(self) -> str:
        how = "at least" if self.metric in HIGHER_IS_BETTER else "at most"
        times = "" if self.ratio == 1 else f"{self.ratio:g} x "
        return f"{METRIC_WORDS[self.metric]} {how} {times}{self.baseline}'s"


class PolicySpec(BaseModel):
    """The cluster, the traces, the rules the learner's policy plays by, and the goals it must meet."""

    model_config = ConfigDict(extra="forbid")

    gpus: int = Field(32, ge=1, le=4096)
    traces: list[TraceSpec] = Field(min_length=1, max_length=4)
    preemptive: bool = False  # whether the learner's policy may stop running jobs
    quantum_minutes: float = Field(30.0, gt=0)  # with preemption, the policy is also asked this often
    restart_minutes: float = Field(1.0, ge=0)  # what a preempted job loses when it resumes (checkpoint reload)
    reveal_duration: bool = True  # whether the policy sees each job's true duration (an oracle)
    # mig: each GPU cut into MIG instances, jobs ask for 1, 2, 3, 4 or 7 compute slices of one GPU;
    # mps: up to 4 one-GPU jobs a GPU, slowing each other by the SMs and bandwidth they use (datacenter.mps)
    sharing: Sharing = "none"
    goals: list[PolicyGoal] = Field(min_length=1)
    compare: list[str] = Field(default_factory=lambda: list(BUILTIN_NAMES))  # the built-ins ranked beside yours

    @model_validator(mode="after")
    def _known_policies(self) -> PolicySpec:
        unknown = sorted({*self.compare, *(g.baseline for g in self.goals)} - set(BUILTIN_NAMES))
        if unknown:
            raise ValueError(f"no built-in policy called {', '.join(unknown)} (there are {', '.join(BUILTIN_NAMES)})")
        missing = sorted({g.baseline for g in self.goals} - set(self.compare))
        if missing:
            raise ValueError(f"a goal's baseline must be compared too: add {', '.join(missing)} to 'compare'")
        preempting = sorted(set(self.compare) & set(PREEMPTIVE_BUILTINS))
        if self.sharing != "none" and (self.preemptive or preempting):
            raise ValueError(
                f"a cluster shared through {self.sharing.upper()} is not preempted in this model: set "
                "'preemptive: false' and compare no preemptive built-in"
                f"{' (' + ', '.join(preempting) + ')' if preempting else ''}"
            )
        return self

    @property
    def capacity(self) -> int:
        """GPUs, or their MIG compute slices, or their MPS client places: what utilisation is counted in."""
        return self.gpus * {"mig": MIG_COMPUTE_SLICES, "mps": MPS_CLIENTS}.get(self.sharing, 1)


# --- a function exercise's settings: the `function:` block of its lab.yaml -----------------------------------
# The learner writes a plain Python function; `gpu_worker.answers` calls it in the sandbox on each case and
# compares its answers with a trusted reference's. The grader names that reference (`answers.graders.GRADERS`).

FunctionCaseValue = int | float | str | bool


class FunctionSpec(BaseModel):
    """Which trusted grader judges the learner's function, and the cases it is asked (each a mapping of scalars)."""

    model_config = ConfigDict(extra="forbid")

    grader: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    cases: list[dict[str, FunctionCaseValue]] = Field(min_length=1, max_length=200)


class Harness(Model):
    """How to make inputs, launch, check and value the work of one exercise.

    A kernel exercise sets sizes, args, launch, expected and work (`labspec` requires them);
    a scheduling exercise sets `policy` instead and leaves them empty, a function exercise `function`.
    """

    sizes: dict[Backend, list[dict[str, int]]] = Field(default_factory=dict)
    args: list[ArgSpec] = Field(default_factory=list)
    launch: LaunchSpec = Field(default_factory=lambda: LaunchSpec(block=["1"], grid=["1"]))
    expected: dict[str, str] = Field(default_factory=dict)  # output name -> NumPy expression over the inputs
    tolerance: Tolerance = Field(default_factory=Tolerance)
    work: WorkSpec = Field(default_factory=lambda: WorkSpec(bytes="0"))
    seed: int = 1234
    goals: list[GoalSpec] = Field(default_factory=list)
    sweep: SweepSpec | None = None
    launch_choices: LaunchChoices | None = None  # block sizes the learner may pick, instead of `launch`
    policy: PolicySpec | None = None  # a scheduling exercise (gpu_worker.datacenter)
    function: FunctionSpec | None = None  # a function exercise (gpu_worker.answers)
    triton: TritonLaunch | None = None  # the Triton language's grid and constexprs (a lab offering `triton`)

    def launch_for(self, language: str) -> LaunchSpec:
        """The launch of one language: Triton's grid of programs, else the lab's CUDA launch."""
        return self.triton.launch() if language == "triton" and self.triton is not None else self.launch

    def args_for(self, language: str) -> list[ArgSpec]:
        return [a for a in self.args if a.languages is None or language in a.languages]

    def outputs(self) -> list[ArgSpec]:
        return [a for a in self.args if a.role == "out"]


class Limits(Model):
    """A run's resources; `gpus` is how many GPUs one run needs (gpu_worker.isolation.placement)."""

    wall_seconds: float = 30.0
    cpu_seconds: int = 60
    memory_mb: int = 4096
    processes: int = 64
    output_bytes: int = 1024 * 1024
    file_bytes: int = 64 * 1024 * 1024
    tmp_mb: int = 512  # the job's /tmp (a tmpfs), also counted in its memory
    cpus: float = 2.0  # CPU bandwidth of the whole job, in cores (its cgroup's quota)
    gpu_memory_mb: int = 32768  # CuPy's memory pool limit in the child
    gpus: int = Field(default=1, ge=1, le=8)


class ExerciseRef(Model):
    slug: str
    language: Language
    entry: str
    harness: Harness
    limits: Limits = Field(default_factory=Limits)
    version: int = 1


class RooflinePoint(Model):
    """A measured point for the roofline: an earlier submission's or the reference's largest timed size."""

    intensity: float  # FLOP per byte
    flop_rate: float  # FLOP/s
    label: str  # e.g. "#12, 2026-12-02"
    submission_id: int | None = None
    device: str = ""  # where it was measured: the figure leaves out points from another device


class Job(Model):
    """What the web sends to a worker: plain JSON, no secrets."""

    version: Literal[1] = PROTOCOL_VERSION
    submission_id: int
    exercise: ExerciseRef
    source: str = Field(max_length=MAX_SOURCE_BYTES)
    launch: LaunchSpec | None = None  # learner's override of the exercise's launch
    requested_by: str = ""
    backend: Backend | None = None  # None: the worker's own
    history: list[RooflinePoint] = Field(default_factory=list)  # the learner's earlier runs, newest first
    reference: RooflinePoint | None = None  # the reference solution's newest run


class Event(Model):
    """One step of a run, streamed to `submission.<id>`; extra fields carry the facts."""

    type: EventType
    seq: int = 0
    at: float = Field(default_factory=time.time)

    @classmethod
    def of(cls, type: str, seq: int, **facts: Any) -> Event:
        """An event with its facts as extra fields (validated, so a bad type fails here)."""
        return cls.model_validate({"type": type, "seq": seq, **facts})


class Diagnostic(Model):
    line: int | None = None  # 1-based, in the learner's own file
    column: int | None = None
    severity: Literal["error", "warning"] = "error"
    message: str


class CompileInfo(Model):
    tool: str = ""
    registers: int | None = None
    shared_bytes: int | None = None
    spill_bytes: int | None = None
    local_bytes: int | None = None
    max_threads_per_block: int | None = None
    arch: str | None = None
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    ptx_excerpt: str | None = None
    sass_excerpt: str | None = None  # machine code with the learner's source lines between instructions
    # added by the execution engine; spill_bytes is the spill stores, local_bytes the stack frame
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    barriers: int | None = None
    constant_bytes: int | None = None
    entry_symbol: str | None = None  # the kernel's name in the PTX (mangled for Numba)
    notes: list[str] = Field(default_factory=list)  # what could not be measured, and why


class Mismatch(Model):
    index: int | list[int]
    expected: float
    got: float
    note: str | None = None  # e.g. "never written" when the poison value is still there


class CheckInfo(Model):
    passed: bool
    output: str = ""
    sizes: dict[str, int] = Field(default_factory=dict)
    mismatches: list[Mismatch] = Field(default_factory=list)
    mismatch_count: int = 0
    max_abs_error: float | None = None
    message: str = ""  # why the check failed when it is not element by element (shape, dtype)


class Result(Model):
    """The one document a run ends with; figures re-render from it."""

    version: Literal[1] = PROTOCOL_VERSION
    submission_id: int
    verdict: Verdict
    backend: Backend
    device: str
    message: str = ""
    compile: CompileInfo | None = None
    checks: list[CheckInfo] = Field(default_factory=list)
    check: CheckInfo | None = None  # the first failing check, or the last passing one
    timing: dict[str, Any] | None = None
    metrics: dict[str, Any] | None = None
    occupancy: dict[str, Any] | None = None
    memory: dict[str, Any] | None = None  # a gpu_worker.science.memtrace_report.MemoryReport, from the sim backend
    profile: dict[str, Any] | None = None  # Nsight Compute's facts (gpu_worker.profiling), cuda backend only
    figures: list[dict[str, Any]] = Field(default_factory=list)
    sandbox: dict[str, Any] = Field(default_factory=dict)
    diagnostics: list[Diagnostic] = Field(default_factory=list)  # where a runtime error happened
    output: str = ""  # what the learner's code printed, capped
    output_truncated: bool = False
    elapsed_seconds: float | None = None
    goals: list[dict[str, Any]] = Field(
        default_factory=list
    )  # gpu_worker.exercise.goals.GoalResult, judged on this backend
    goals_met: bool | None = None  # None: no goal could be judged on this backend
    executed_by: ExecutedBy | None = None  # set by the engine; None: no kernel ran (a compile error, a rejection)

    @classmethod
    def of(cls, submission_id: int, verdict: str, backend: str, device: str, message: str, **facts: Any) -> Result:
        """A result with its facts as fields (validated, so a bad verdict or backend fails here)."""
        fields = {"submission_id": submission_id, "verdict": verdict, "backend": backend, "device": device}
        return cls.model_validate({**fields, "message": message, **facts})

    @classmethod
    def error(cls, submission_id: int, message: str, backend: str, device: str, **facts: Any) -> Result:
        """An infrastructure failure's result: the run ended for a reason on our side, said in `message`."""
        return cls.of(submission_id, "error", backend, device, message, **facts)


class Outcome:
    """One job's events, numbered from FIRST_SEQ, and the one way it ends: `finish`.

    `finish` builds the Result, holds it to RESULT_BYTES and sends the final event: `done` with the verdict,
    or `error` when the failure is ours, then hands the result to `on_result` (a worker reports it there).
    Nothing is numbered after it: the run's story ends with its final event. A step that may come after the
    verdict (the CPU tier's SASS listing) is numbered before it (`reserve`) and sent late (`send_reserved`).
    """

    def __init__(
        self,
        submission_id: int,
        emit: Callable[[Event], None],
        backend: str,
        device: str = "",
        on_result: Callable[[Result], None] | None = None,
    ) -> None:
        self.submission_id, self.emit, self.backend = submission_id, emit, backend
        self.device = device or backend  # the job's backend until its device is known
        self.sandbox: dict[str, Any] = {}  # the sandbox's description once known: every result carries it
        self.started = time.monotonic()
        self.ended = False
        self.on_result = on_result
        self._seqs = itertools.count(FIRST_SEQ)
        self._reserved: set[int] = set()

    def reserve(self) -> int:
        """A number for an event that may come after the final one, told in its place before it."""
        seq = next(self._seqs)
        self._reserved.add(seq)
        return seq

    def send_reserved(self, seq: int, kind: str, **facts: Any) -> None:
        """The event of a number `reserve` gave, once, before or after the final event."""
        self._reserved.remove(seq)  # KeyError: not reserved, or sent already
        self.emit(Event.of(kind, seq, **facts))

    def send(self, kind: str, **facts: Any) -> None:
        if self.ended:
            raise RuntimeError(f"a {kind!r} event of submission {self.submission_id} after its final event")
        self.emit(Event.of(kind, next(self._seqs), **facts))

    def finish(self, verdict: str, message: str, **facts: Any) -> Result:
        """The job's result, its final event sent (`done` carries the goals' checklist too)."""
        facts.setdefault("elapsed_seconds", round(time.monotonic() - self.started, 3))
        facts.setdefault("sandbox", self.sandbox)
        result = Result.of(self.submission_id, verdict, self.backend, self.device, message, **facts)
        size = len(result.model_dump_json())
        if size > RESULT_BYTES:  # the learner's words (output, diagnostics, forged reports) made it this big
            verdict = "runtime_error"
            message = f"your program's result was {size} bytes, over the limit of {RESULT_BYTES}"
            kept = {"elapsed_seconds": result.elapsed_seconds, "sandbox": facts["sandbox"] or {}}
            result = Result.of(self.submission_id, verdict, self.backend, self.device, message, **kept)
        if verdict == "error":
            self.send("error", message=message)
        else:
            judged = {k: facts[k] for k in ("goals", "goals_met") if k in facts}
            self.send("done", verdict=verdict, message=message, elapsed_seconds=result.elapsed_seconds, **judged)
        self.ended = True
        if self.on_result is not None:
            self.on_result(result)
        return result


# --- the heartbeat: what a worker says about itself, every few seconds, in the broker's Redis --------------
# `gpu_worker.worker.heartbeat` decides the state and writes the document; the web side
# (`labs.fleet.heartbeats`) reads it. Defined here, not beside the writer, so that the reader
# imports none of Celery's worker internals.

STARTING, CALIBRATING, SERVING, OUT_OF_SERVICE = "starting", "calibrating", "serving", "out_of_service"
# Healthy, but consuming nothing new at an admin's word (Celery's cancel_consumer); the job in flight finishes.
DRAINING = "draining"


@dataclass(frozen=True)
class WorkerStatus:
    """What the heartbeat says about the slice, apart from who the worker is."""

    state: str
    device: str
    ceilings: dict[str, float] | None = None
    anchors: dict[str, float] | None = None
    measured_at: str | None = None
    healthy: bool | None = None
    problems: list[str] = field(default_factory=list)
    gpu_uuid: str | None = None
    device_facts: dict[str, Any] | None = None  # the driver's facts (SMs, registers, L2, clocks) for lesson pages


def heartbeat_key(prefix: str, name: str) -> str:
    """The Redis key of worker `name`'s heartbeat, under the broker's key prefix."""
    return f"{prefix}warplab:worker:{name}"


def now_iso() -> str:
    """Now, in UTC, as the document's `updated_at` writes it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def heartbeat_document(
    status: WorkerStatus,
    *,
    name: str,
    queue: str,
    pool: str,
    backend: str,
    slice_kind: str = "",
    gpu_state: Any = None,
    gpu_busy: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The heartbeat document: who the worker is, its slice, what it measured, and its state (and its GPU's) now;
    `gpu_busy`, the GPU's timing-lock seconds per wall second over the last minute."""
    return {
        "name": name,
        "queue": queue,
        "pool": pool,
        "backend": backend,
        "slice_kind": slice_kind,
        "gpu_state": gpu_state,
        "gpu_busy": gpu_busy,
        **asdict(status),
        "updated_at": now_iso(),
        "pid": os.getpid(),
        "host": socket.gethostname(),
    }
