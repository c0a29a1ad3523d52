"""The engine's side of a scheduling exercise: sandbox the learner's policy, replay its decisions, rank it.

`run_policy_job` is what `gpu_worker.engine.run_job` hands a job in language
`policy`. The learner's `choose(queue, free_gpus, now)` runs only in the
sandboxed child (`policy_child`), which simulates each trace with it and sends
back the decisions it made. This process trusts none of it: it rebuilds the
traces itself, replays the decisions in its own simulator (which rejects any
decision that could not happen: a job not in the queue, the same job twice),
computes every metric itself, runs the built-in policies on the same traces,
and judges the exercise's goals. A child that lies can only fail its own job.

Events: `started`, then `compile_error`, or one `check` per goal and trace,
`log` lines with the ranking, `metrics`, the figures, and `done`.
"""

from __future__ import annotations

import functools
from dataclasses import asdict
from typing import Any

from pydantic import ValidationError

from gpu_worker.datacenter import figures
from gpu_worker.datacenter.metrics import Metrics, measure
from gpu_worker.datacenter.mig import COMPUTE_SLICES
from gpu_worker.datacenter.policies import BUILTINS
from gpu_worker.datacenter.simulate import (
    Choice,
    InvalidDecision,
    Replay,
    ReplayExhausted,
    Rules,
    Schedule,
    Stalled,
    simulate,
)
from gpu_worker.datacenter.spec import HIGHER_IS_BETTER, METRIC_WORDS, PolicySpec
from gpu_worker.datacenter.trace import GPU_MIX, MIG_MIX, SOURCE, TraceJob, mps_trace, synthetic_trace
from gpu_worker.isolation import learner_python, sandbox
from gpu_worker.protocol import CheckInfo, Diagnostic, Job, Outcome, Result

CHILD_MODULE = "gpu_worker.datacenter.policy_child"
DEVICE = "CPU (cluster scheduling model, no GPU used)"
FINAL_TYPES = frozenset({"finished", "compile_error", "runtime_error", "invalid", "error"})
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
UNITS = {"none": "GPUs", "mig": "MIG compute slices", "mps": "MPS client places"}  # what utilisation counts


class _Malformed(Exception):
    """The child sent something that does not fit the job."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_placed(value: object) -> bool:
    """A job placed by the policy, as JSON carries it: [job id, GPU] (MPS) or [job id, GPU, first slice] (MIG).

    The replay checks that its length is the one the cluster's sharing asks for.
    """
    return isinstance(value, list) and len(value) in (2, 3) and all(map(_is_int, value))


class _Collector:
    """The child's messages, validated and bounded as they arrive."""

    def __init__(self, traces: list[list[TraceJob]], max_decisions: int):
        self.sizes = [len(t) for t in traces]
        self.max_decisions = max_decisions
        self.decisions: list[list[list[Choice]]] = [[] for _ in traces]
        self.done: set[int] = set()
        self.failure: tuple[str, str, list[Diagnostic]] | None = None
        self.uid: int | None = None
        self.infra_error = ""

    def __call__(self, message: dict[str, Any]) -> None:
        try:
            self._handle(message)
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            raise _Malformed(str(exc)) from None

    def _index(self, message: dict[str, Any]) -> int:
        index = message["index"]
        if not isinstance(index, int) or not 0 <= index < len(self.sizes) or index in self.done:
            raise _Malformed(f"a message for trace {index!r}, which is not open")
        return index

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "hello":
            self.uid = int(message["uid"])
        elif kind == "decisions":
            index = self._index(message)
            chunk = message["decisions"]
            kept = self.decisions[index]
            if not isinstance(chunk, list) or len(kept) + len(chunk) > self.max_decisions:
                raise _Malformed("too many decisions")
            for decision in chunk:
                if not isinstance(decision, list) or len(decision) > self.sizes[index]:
                    raise _Malformed("a decision is not a list of job ids")
                if not all(_is_int(i) or _is_placed(i) for i in decision):
                    raise _Malformed("a decision holds something other than job ids and placed jobs")
                kept.append([i if _is_int(i) else tuple(i) for i in decision])
        elif kind == "trace_done":
            self.done.add(self._index(message))
        elif kind in ("compile_error", "runtime_error", "invalid"):
            if self.failure is None:
                diagnostics = [Diagnostic.model_validate(d) for d in (message.get("diagnostics") or [])[:5]]
                self.failure = (kind, str(message.get("message", ""))[:2000], diagnostics)
        elif kind == "finished":
            pass
        elif kind == "error":
            self.infra_error = str(message.get("message", "the policy's child process failed"))[:2000]
        else:
            raise _Malformed(f"an unknown message {kind!r}")


def learner_rules(spec: PolicySpec) -> Rules:
    timing = (spec.quantum_minutes, spec.restart_minutes)
    return Rules(spec.gpus, spec.preemptive, *timing, spec.reveal_duration, sharing=spec.sharing)


def _builtin_rules(spec: PolicySpec, name: str) -> Rules:
    preemptive = BUILTINS[name].preemptive
    return Rules(spec.gpus, preemptive, spec.quantum_minutes, spec.restart_minutes, True, sharing=spec.sharing)


@functools.lru_cache(maxsize=64)
def _trace(seed: int, jobs: int, gpus: int, load: float, sharing: str) -> tuple[TraceJob, ...]:
    if sharing == "mps":
        return tuple(mps_trace(seed, jobs, gpus, load))
    if sharing == "mig":
        return tuple(synthetic_trace(seed, jobs, gpus * COMPUTE_SLICES, load, MIG_MIX))
    return tuple(synthetic_trace(seed, jobs, gpus, load, GPU_MIX))


@functools.lru_cache(maxsize=64)
def _builtin_schedule(name: str, trace: tuple[TraceJob, ...], rules: Rules) -> Schedule:
    """A built-in's schedule (our own code, in this process), kept: the same trace is asked for job after job."""
    return simulate(list(trace), rules, BUILTINS[name].choose)


def _cluster_words(spec: PolicySpec) -> str:
    return {
        "mig": f"{spec.gpus} GPUs in MIG mode, {spec.capacity} compute slices",
        "mps": f"{spec.gpus} GPUs shared through MPS, up to {spec.capacity} jobs",
    }.get(spec.sharing, f"{spec.gpus} GPUs")


def traces_of(spec: PolicySpec) -> list[list[TraceJob]]:
    return [list(_trace(t.seed, t.jobs, spec.gpus, t.load, spec.sharing)) for t in spec.traces]


def ranking(results: dict[str, Metrics], metric: str) -> list[dict[str, Any]]:
    """Rows best first by `metric`, each with its rank (ties share one)."""
    sign = -1 if metric in HIGHER_IS_BETTER else 1
    ordered = sorted(results.items(), key=lambda kv: (sign * getattr(kv[1], metric), kv[0]))
    rows, rank, previous = [], 0, None
    for position, (name, m) in enumerate(ordered, start=1):
        value = round(getattr(m, metric), 6)
        if value != previous:
            rank, previous = position, value
        title = BUILTINS[name].title if name in BUILTINS else name
        rows.append({"rank": rank, "policy": title, "name": name, **m.as_dict()})
    return rows


def run_policy_job(job: Job, emit: Any, backend: str = "sim") -> Result:
    """Run one scheduling job to its verdict, emitting events; never raises for the learner's faults."""
    started = learner_python.begin(job, emit, backend, DEVICE)
    if isinstance(started, Result):
        return started
    outcome, spec, limits = started, job.exercise.harness.policy, job.exercise.limits
    if spec is None:
        return outcome.finish("error", "this exercise has no 'policy' settings: the lab folder is broken")
    rejection = learner_python.precheck(job)
    if rejection:
        return outcome.finish("rejected", rejection)
    traces, rules = traces_of(spec), learner_rules(spec)
    request = {
        "source": job.source,
        "entry": job.exercise.entry,
        "rules": asdict(rules),
        "traces": [[j.as_list() for j in trace] for trace in traces],
    }
    collector = _Collector(traces, rules.max_decisions)
    ran = learner_python.run_child(
        outcome,
        request,
        limits,
        collector,
        child_module=CHILD_MODULE,
        max_message_bytes=MAX_MESSAGE_BYTES,
        final_types=FINAL_TYPES,
        malformed=(_Malformed,),
        what="policy",
    )
    if isinstance(ran, Result):
        return ran
    run, printed = ran
    if collector.failure is not None and collector.failure[0] == "compile_error":
        _, message, diagnostics = collector.failure
        return learner_python.compile_error(outcome, message, diagnostics, printed)
    schedules: list[Schedule] = []
    for index, trace in enumerate(traces):
        replay = Replay(collector.decisions[index])
        try:
            schedules.append(simulate(trace, rules, replay))
        except InvalidDecision as exc:
            return outcome.finish("wrong_answer", f"trace {index + 1}: {exc}", **printed)
        except Stalled as exc:
            return outcome.finish(
                "wrong_answer", f"trace {index + 1}: your policy stalled the cluster: {exc}", **printed
            )
        except ReplayExhausted:
            return _ended_early(outcome, collector, run, index, printed)
        if replay.used != len(replay.decisions) or index not in collector.done:
            return outcome.finish(
                "runtime_error", f"trace {index + 1}: the policy's decisions do not replay", **printed
            )
    return _judge(spec, traces, schedules, outcome, printed)


def _ended_early(outcome: Outcome, collector: _Collector, run: sandbox.SandboxRun, index: int, printed: dict) -> Result:
    """The decisions ran out: the child said why (the learner's exception, an invalid answer), or it died."""
    if collector.failure is not None:
        kind, message, diagnostics = collector.failure
        verdict = "wrong_answer" if kind == "invalid" else "runtime_error"
        return outcome.finish(verdict, f"trace {index + 1}: {message}", diagnostics=diagnostics, **printed)
    if collector.infra_error:
        return outcome.finish("error", collector.infra_error, **printed)
    return outcome.finish(
        "runtime_error",
        f"the policy's process ended before trace {index + 1} was done (exit status {run.returncode}): "
        "a crash, out of memory or an exit() call",
        **printed,
    )


def _judge(
    spec: PolicySpec, traces: list[list[TraceJob]], schedules: list[Schedule], outcome: Outcome, printed: dict
) -> Result:
    """Metrics for the learner's schedules and the built-ins', the goals checked, the ranking and the figures."""
    checks: list[CheckInfo] = []
    per_trace: list[dict[str, Any]] = []
    figure_entries: list[dict[str, Any]] = []
    ranked_by = spec.goals[0].metric
    for index, (trace, schedule) in enumerate(zip(traces, schedules, strict=True)):
        theirs = {n: _builtin_schedule(n, tuple(trace), _builtin_rules(spec, n)) for n in spec.compare}
        results = {figures.YOURS: measure(trace, schedule, spec.capacity)}
        results |= {n: measure(trace, s, spec.capacity) for n, s in theirs.items()}
        for goal in spec.goals:
            yours, baseline = getattr(results[figures.YOURS], goal.metric), getattr(results[goal.baseline], goal.metric)
            passed = goal.met(yours, baseline)
            info = CheckInfo(
                passed=passed,
                output=goal.metric,
                sizes={"trace": index + 1, "jobs": len(trace)},
                message=f"{goal.words()}: yours {yours:.4g}, {goal.baseline}'s {baseline:.4g}",
            )
            checks.append(info)
            outcome.send("check", index=index, **info.model_dump())
        rows = ranking(results, ranked_by)
        mine = next(r for r in rows if r["name"] == figures.YOURS)
        outcome.send(
            "log",
            message=f"trace {index + 1} ({len(trace)} jobs, {_cluster_words(spec)}): your policy ranks "
            f"{mine['rank']} of {len(rows)} by {METRIC_WORDS[ranked_by]} ({mine[ranked_by]:.4g}); "
            + ", ".join(f"{r['policy']} {r[ranked_by]:.4g}" for r in rows if r["name"] != figures.YOURS),
        )
        seed = spec.traces[index]
        per_trace.append({"seed": seed.seed, "jobs": seed.jobs, "load": seed.load, "ranking": rows})
        if index == 0:
            drawn = {figures.YOURS: schedule, **theirs}
            figure_entries = [
                figures.ranking_figure(rows),
                figures.utilisation_figure(drawn, spec.capacity, UNITS[spec.sharing]),
                figures.jct_cdf_figure(trace, drawn),
                figures.fairness_figure(results),
            ]
    metrics = {"model": figures.MODEL_LABEL, "trace_source": SOURCE, "ranked_by": ranked_by, "traces": per_trace}
    outcome.send("metrics", **metrics)
    for entry in figure_entries:
        outcome.send("figure", **entry)
    failed = [c for c in checks if not c.passed]
    if failed:
        first = failed[0]
        verdict, message = "wrong_answer", f"trace {first.sizes['trace']}: not met: {first.message}"
    else:
        verdict, message = "accepted", f"all {len(checks)} goals met"
    check = failed[0] if failed else checks[-1]
    return outcome.finish(
        verdict, message, checks=checks, check=check, metrics=metrics, figures=figure_entries, **printed
    )
