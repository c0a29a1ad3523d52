"""A scheduling exercise's settings, the `policy:` block of its `lab.yaml`.

It travels inside the job's harness (`gpu_worker.protocol.Harness.policy`), so
the web side stores and sends it without knowing what it means.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

BUILTIN_NAMES = ("fifo", "sjf", "gang", "easy", "tiresias", "gandiva")  # gpu_worker.datacenter.policies.BUILTINS
Metric = Literal["mean_jct", "p95_jct", "makespan", "utilisation", "jain", "preemptions"]
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


class Goal(BaseModel):
    """Yours against a built-in's on every trace: at most `ratio` times it (at least, for higher-is-better)."""

    model_config = ConfigDict(extra="forbid")

    metric: Metric
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
    goals: list[Goal] = Field(min_length=1)
    compare: list[str] = Field(default_factory=lambda: list(BUILTIN_NAMES))  # the built-ins ranked beside yours

    @model_validator(mode="after")
    def _known_policies(self) -> PolicySpec:
        unknown = sorted({*self.compare, *(g.baseline for g in self.goals)} - set(BUILTIN_NAMES))
        if unknown:
            raise ValueError(f"no built-in policy called {', '.join(unknown)} (there are {', '.join(BUILTIN_NAMES)})")
        missing = sorted({g.baseline for g in self.goals} - set(self.compare))
        if missing:
            raise ValueError(f"a goal's baseline must be compared too: add {', '.join(missing)} to 'compare'")
        return self
