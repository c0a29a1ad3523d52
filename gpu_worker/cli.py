"""`python -m gpu_worker`: run a kernel, check the labs' sample submissions, or test this worker, without the website.

    python -m gpu_worker run --exercise vector-add --language numba --source my.py [--backend sim] [--events]
    python -m gpu_worker check-labs [--backend sim] [--lab vector-add] [--jobs 4] [--json cases.json] [--ncu-goals]
    python -m gpu_worker selftest [--backend sim]
    python -m gpu_worker occupancy ...
    python -m gpu_worker calibrate [--refresh] [--json]

`run` prints the Result as JSON on stdout (events as JSON lines on stderr with
--events) and exits 0 whenever a verdict was reached, 1 when the worker
itself failed, 2 for usage errors. `check-labs` exits 1 when any sample
submission gets another verdict than its `expected.yaml` says. With `--ncu-goals` (cuda backend) each accepted
case of an exercise with memory-access goals is also profiled once under Nsight Compute, and its JSON record
carries those goals' GPU figures (`ncu_goals`, see `gpu_worker.exercise.profiled_goals`); the verdicts and the
exit status are the same as without it.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import multiprocessing
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpu_worker.engine import run_job, run_profile
from gpu_worker.exercise import profiled_goals
from gpu_worker.exercise.labspec import Lab, LabError, find_lab, load_all
from gpu_worker.protocol import LANGUAGES, Event, ExerciseRef, GoalSpec, Job, Result

USAGE_ERROR = 2


def _configured_backend() -> str:
    try:
        from gpu_worker.settings import WorkerSettings

        return WorkerSettings().backend
    except Exception:  # settings not written yet, or not importable here: the CPU simulator
        return "sim"


def make_job(exercise: ExerciseRef, source: str, submission_id: int | None = None, backend: str | None = None) -> Job:
    """A job for the command line; a source over the size limit still becomes a job, which the engine rejects."""
    fields = {
        "submission_id": submission_id if submission_id is not None else time.time_ns() // 1000 % 2**31,
        "exercise": exercise,
        "source": source,
        "requested_by": "cli",
        "backend": backend,
    }
    try:
        return Job.model_validate(fields)
    except ValidationError:
        return Job.model_construct(**fields, version=1, launch=None)  # type: ignore[arg-type]


def _print_event(event: Event) -> None:
    print(event.model_dump_json(), file=sys.stderr, flush=True)


def _cmd_run(args: argparse.Namespace) -> int:
    try:
        lab = find_lab(args.exercise, args.content)
    except LabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if args.language not in lab.spec.languages:
        print(
            f"error: {lab.spec.slug} is offered in {', '.join(lab.spec.languages)}, not {args.language}",
            file=sys.stderr,
        )
        return USAGE_ERROR
    try:
        source = Path(args.source).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {args.source}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    exercise = lab.exercise_ref(args.language)
    if args.wall_seconds:
        exercise.limits.wall_seconds = args.wall_seconds
    job = make_job(exercise, source, args.submission_id, args.backend)
    result = run_job(job, _print_event if args.events else (lambda event: None), backend=args.backend or "sim")
    print(result.model_dump_json(indent=2))
    return 1 if result.verdict == "error" else 0


def _run_case(lab: Lab, language: str, source: str, backend: str) -> Result:
    return run_job(make_job(lab.exercise_ref(language), source, backend=backend), lambda event: None, backend=backend)


def _ignore(event: Event) -> None:
    """Events of a check-labs run: only the result is compared."""


@dataclass(frozen=True)
class _Checked:
    """One sample's outcome in `check-labs`: what it should get, what it got, how long it took."""

    lab: str
    case: str
    language: str
    expected: str
    got: str
    seconds: float
    ok: bool
    message: str
    goals: tuple[dict[str, Any], ...] = ()  # each goal as judged: name, metric, target, comparison, measured, met
    ncu_goals: dict[str, Any] | None = None  # --ncu-goals: the memory-access goals measured by Nsight Compute


_GOAL_FIELDS = ("name", "metric", "target", "comparison", "measured", "met")


def _ncu_goals(job: Job, goals: list[GoalSpec], result: Result) -> dict[str, Any]:
    """The case's memory-access goals measured under Nsight Compute (one launch), or why they were not."""
    if result.verdict != "accepted":
        reason = f"not profiled: goals are judged on accepted runs only, and this one got {result.verdict}"
        return profiled_goals.not_measured(goals, reason)
    started = time.monotonic()
    try:
        facts = run_profile(job, _ignore, "cuda", for_goals=True)
    except Exception as exc:  # ours, not the case's: said in its record, and the verdict check goes on
        facts = {"available": False, "reason": "the profiling run failed in check-labs", "detail": repr(exc)[:500]}
    return {**profiled_goals.record(goals, facts), "seconds": round(time.monotonic() - started, 1)}


def _check_case(lab: Lab, case_index: int, backend: str, ncu_goals: bool = False) -> _Checked:
    """Run one sample and compare it with its recorded verdict (and goals, where the case records them).

    With `ncu_goals` an exercise's memory-access goals are also measured under Nsight Compute, after the
    verdict (which they never change).
    """
    case = lab.cases[case_index]
    started = time.monotonic()
    job = make_job(lab.exercise_ref(case.language), case.source, backend=backend)
    result = run_job(job, _ignore, backend=backend)
    expected, got = str(case.verdict_on(backend)), str(result.verdict)
    ok = got == expected
    goals_met = case.goals_met_on(backend, lab.spec.goals)
    if goals_met is not None:  # the goals are part of what the case must get
        expected += " (goals met)" if goals_met else " (goals missed)"
        if got == "accepted":
            got += {True: " (goals met)", False: " (goals missed)", None: " (goals not judged)"}[result.goals_met]
        ok = ok and result.goals_met is goals_met
    seconds = time.monotonic() - started
    goals = tuple({k: g.get(k) for k in _GOAL_FIELDS} for g in result.goals)
    wanted = profiled_goals.profiled(lab.spec.goals) if ncu_goals else []
    profiled = _ncu_goals(job, wanted, result) if wanted else None
    message = result.message[:100]
    return _Checked(lab.spec.slug, case.name, case.language, expected, got, seconds, ok, message, goals, profiled)


def _check_in_a_process(content: Path | None, slug: str, case_index: int, backend: str, ncu_goals: bool) -> _Checked:
    return _check_case(find_lab(slug, content), case_index, backend, ncu_goals)


def _ncu_line(record: dict[str, Any]) -> str:
    """A case's Nsight Compute figures in one printed line (or why there are none)."""
    if not record.get("available"):
        return f"     ncu: {record.get('reason')}"
    said = [g["reason"] + {True: " (met)", False: " (missed)", None: ""}[g["met"]] for g in record["goals"]]
    return f"     ncu ({record.get('seconds', 0):.1f}s): " + "; ".join(said)


def _write_json(
    path: Path, backend: str, done: list[_Checked], names: Sequence[tuple[str, str, str]], total: int
) -> None:
    """Every case so far, in the labs' order whatever order they ended in; rewritten as each ends, so a run
    stopped by its ceiling still leaves the cases it finished (`complete` says whether all did)."""
    order = {(slug, case): i for i, (slug, case, _) in enumerate(names)}
    cases = []
    for checked in sorted(done, key=lambda c: order[(c.lab, c.case)]):
        fields = asdict(checked)
        if fields["ncu_goals"] is None:  # a case without memory-access goals (or a run without the flag)
            del fields["ncu_goals"]
        cases.append(fields)
    document = {"backend": backend, "complete": len(done) == total, "cases": cases}
    path.write_text(json.dumps(document, indent=1))


def _cmd_check_labs(args: argparse.Namespace) -> int:
    """Every sample of every lab, a line each as it ends (and its Nsight Compute figures with --ncu-goals), then a
    summary.

    With `--jobs N` N cases run side by side, each in a process of its own (on a GPU the checks share it
    and the timed launches take the per-GPU lock in turn), so the whole curriculum fits in one device call.
    """
    try:
        labs = load_all(args.content)[1]
    except LabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if args.ncu_goals and args.backend != "cuda":
        print("error: --ncu-goals profiles on a GPU: it needs --backend cuda", file=sys.stderr)
        return USAGE_ERROR
    if args.lab:
        labs = [lab for lab in labs if lab.spec.slug in args.lab]
    todo = [(lab, i) for lab in labs for i in range(len(lab.cases))]
    names = [(lab.spec.slug, lab.cases[i].name, lab.cases[i].language) for lab, i in todo]
    width = [max((len(n[k]) for n in names), default=1) for k in range(3)]
    print(f"{len(todo)} sample submissions in {len(labs)} labs on {args.backend}, {args.jobs} at a time", flush=True)
    started = time.monotonic()
    done: list[_Checked] = []

    def report(checked: _Checked) -> None:
        done.append(checked)
        cells = (checked.lab.ljust(width[0]), checked.case.ljust(width[1]), checked.language.ljust(width[2]))
        line = f"{'ok  ' if checked.ok else 'FAIL'} {'  '.join(cells)}  {checked.got} ({checked.seconds:.1f}s)"
        if not checked.ok:
            line += f"\n     expected {checked.expected}: {checked.message}"
        if checked.ncu_goals is not None:
            line += "\n" + _ncu_line(checked.ncu_goals)
        print(f"[{len(done)}/{len(todo)}] {line}", flush=True)
        if args.json:
            _write_json(args.json, args.backend, done, names, len(todo))

    if args.jobs <= 1:
        for lab, i in todo:
            report(_check_case(lab, i, args.backend, args.ncu_goals))
    else:
        with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [
                pool.submit(_check_in_a_process, args.content, lab.spec.slug, i, args.backend, args.ncu_goals)
                for lab, i in todo
            ]
            for future in concurrent.futures.as_completed(futures):
                report(future.result())
    failures = [c for c in done if not c.ok]
    verdicts = collections.Counter(c.got.split(" ")[0] for c in done)
    print(
        f"\n{len(done) - len(failures)} of {len(done)} sample submissions got their verdict on {args.backend}"
        f" in {time.monotonic() - started:.0f} s ({', '.join(f'{n} {v}' for v, n in verdicts.most_common())})"
    )
    for checked in failures:
        print(f"FAIL {checked.lab}/{checked.case} ({checked.language}): expected {checked.expected}, got {checked.got}")
    if args.json:
        _write_json(args.json, args.backend, done, names, len(todo))
    return 1 if failures else 0


def _cmd_selftest(args: argparse.Namespace) -> int:
    backend = args.backend or _configured_backend()
    try:
        lab = find_lab("vector-add", args.content)
    except LabError as exc:
        print(f"failed: {exc}")
        return 1
    ok = True
    for language in lab.spec.languages:
        result = _run_case(lab, language, lab.references[language], backend)
        expected = "accepted"  # CUDA C++ too: the CPU tier runs its PTX on the executor
        good = result.verdict == expected
        ok &= good
        print(
            f"{'ok' if good else 'failed'}: vector-add reference ({language}) on {backend}: {result.verdict}"
            f" in {result.elapsed_seconds}s{'' if good else ' - ' + result.message}"
        )
    print("ok" if ok else "failed")
    return 0 if ok else 1


def _cmd_occupancy(rest: list[str]) -> int:
    from gpu_worker.occupancy_cli import main as occupancy_main  # another module; imported only when asked for

    return int(occupancy_main(rest) or 0)


def _cmd_serve(args: argparse.Namespace) -> int:
    from gpu_worker.worker.service import serve  # Celery is imported only by the worker process

    serve(pool=args.pool, loglevel=args.loglevel, name=args.name, lane=args.lane)
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m gpu_worker", description="WarpLab's execution service.")
    commands = top.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run one source file against an exercise and print the result")
    run.add_argument("--exercise", required=True, help="the lab's slug, e.g. vector-add")
    run.add_argument("--language", required=True, choices=LANGUAGES)
    run.add_argument("--source", required=True, help="the file to run")
    run.add_argument("--backend", choices=("sim", "cuda"), default=None, help="default: sim")
    run.add_argument("--content", type=Path, default=None, help="the lab content folder (default: labs/content)")
    run.add_argument("--events", action="store_true", help="print events to stderr as JSON lines")
    run.add_argument("--submission-id", type=int, default=None, help="fixes the input seed (default: fresh)")
    run.add_argument("--wall-seconds", type=float, default=None, help="override the exercise's wall-clock limit")
    run.set_defaults(handler=_cmd_run)

    check = commands.add_parser("check-labs", help="run every lab's sample submissions and compare their verdicts")
    check.add_argument("--backend", choices=("sim", "cuda"), default="sim")
    check.add_argument("--content", type=Path, default=None)
    check.add_argument("--lab", action="append", help="only this lab (repeatable)")
    check.add_argument("--jobs", type=int, default=1, help="cases side by side, each in a process of its own")
    check.add_argument("--json", type=Path, default=None, help="also write every case, its goals measured, here")
    check.add_argument(
        "--ncu-goals",
        action="store_true",
        help="cuda: also measure each accepted case's memory-access goals (sectors per request, bank-conflict ways,"
        " traffic; active lanes in a second launch) under Nsight Compute, into --json; verdicts are unaffected",
    )
    check.set_defaults(handler=_cmd_check_labs)

    selftest = commands.add_parser("selftest", help="run the vector-add reference on this worker's backend")
    selftest.add_argument("--backend", choices=("sim", "cuda"), default=None, help="default: the worker's setting")
    selftest.add_argument("--content", type=Path, default=None)
    selftest.set_defaults(handler=_cmd_selftest)

    serve = commands.add_parser("serve", help="a Celery worker for this slice's queue (WARPLAB_POOL, sim by default)")
    serve.add_argument("--pool", default=None, help="pool name: sim, or a GPU pool such as h200.full")
    serve.add_argument("--loglevel", default="INFO")
    serve.add_argument("--name", default=None, help="worker name (WARPLAB_WORKER_NAME, else <queue>@<host>)")
    serve.add_argument(
        "--lane",
        choices=("verdict", "profile"),
        default="verdict",
        help="profile: consume gpu.<pool>.profile, Nsight Compute runs asked for after a verdict",
    )
    serve.set_defaults(handler=_cmd_serve)

    commands.add_parser("occupancy", help="the offline occupancy calculator (its own --help)", add_help=False)
    commands.add_parser("calibrate", help="measure (or show the cached) ceilings of this GPU (its own --help)")
    return top


def _compile_checks(cp: Any, folder: Path) -> None:
    """The device check's kernels for every lab, into the jobs' seed cache (`calibrate --warm-kernel-cache`)."""
    from gpu_worker.backends.device_check import warm_checks

    for problem in warm_checks(cp, folder):
        print(f"kernel cache: no check compiled for {problem}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["occupancy"]:
        return _cmd_occupancy(argv[1:])
    if argv[:1] == ["calibrate"]:  # needs a GPU; imported only when asked for
        from gpu_worker.measurement.calibrate import main as calibrate_main

        return calibrate_main(argv[1:], warmers=(_compile_checks,))
    args = parser().parse_args(argv)
    return args.handler(args)
