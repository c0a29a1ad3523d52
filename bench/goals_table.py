"""Every exercise's goals measured on a GPU, as one committed table (issue 28): docs/curriculum-goals.md.

    python3 bench/goals_table.py --check-labs RUN-check-labs-cuda.json --session RUN-stdout.txt \\
        --out docs/curriculum-goals.md [--goals RUN-goals-new.json ...]

Per exercise, in module order: its goals (lab.yaml), each with its target and the figure each reference
measured; then every sample with the verdict it must get, the one it got, and its goals' figures. The inputs:

- `--check-labs`: what `python -m gpu_worker check-labs --backend cuda` wrote: its `--json` file (verdicts and
  every goal's measured figure; with `--ncu-goals`, the memory-access goals' figures Nsight Compute measured) or
  its printed text (verdicts only);
- `--session`: bench/device_session.sh's stdout.txt, whose first lines name the date, the commit and the GPU;
- `--goals`: bench/curriculum_goals.py's JSON, for figures the check-labs input lacks (the text has none); each
  such figure is marked with its file, which may be another run on another GPU.

A figure no input has is written "-". Goals judged only on the CPU tier, `sim` (the memory-trace metrics), are
not measured by the GPU run's engine, and the table says so ("not on cuda: judged on sim"), except where
`check-labs --ncu-goals` measured them under Nsight Compute: those figures are marked `[ncu]`, and the header
says what they are (kernel-wide averages at one GPU size, not the CPU tier's worst line, except
`lanes_per_request`, read per SASS instruction from ncu's source page: the worst site, as on the CPU tier).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from the repository root

from gpu_worker.exercise.goals import AT_MOST, BACKENDS, UNITS
from gpu_worker.exercise.labspec import Lab, load_all

LINE = re.compile(r"^\[\d+/\d+\] (ok|FAIL)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.+?) \(([\d.]+)s\)$")
EXPECTED = re.compile(r"^\s+expected (.+?): (.*)$")
HEADER = re.compile(r"^\d+ sample submissions in \d+ labs on (\w+)")


@dataclass
class Case:
    """One sample's outcome: the verdict it must get, the one it got, and its goals' figures by name."""

    lab: str
    case: str
    language: str
    expected: str
    got: str
    ok: bool
    message: str = ""
    measured: dict[str, tuple[float | None, str]] = field(default_factory=dict)  # name: (figure, its source mark)
    ncu_source: str = ""  # check-labs --ncu-goals: "Nsight Compute <version> on <GPU>", where it measured
    ncu_failed: str = ""  # why Nsight Compute measured nothing for a case it tried


NCU = "ncu"  # the mark of a figure Nsight Compute measured (check-labs --ncu-goals)


def _read_ncu(case: Case, record: dict | None) -> None:
    """A case's `ncu_goals` record into its figures (marked `[ncu]`) or the reason it has none."""
    if not record:
        return
    if not record.get("available"):
        if not str(record.get("reason", "")).startswith("not profiled"):  # a verdict other than accepted: no try
            case.ncu_failed = str(record.get("reason") or "no reason given")
        return
    case.ncu_source = str(record.get("source") or "Nsight Compute")
    for goal in record.get("goals") or []:
        if goal.get("measured") is not None and case.measured.get(goal["name"], (None, ""))[0] is None:
            case.measured[goal["name"]] = (goal["measured"], NCU)


def read_check_labs(path: Path) -> tuple[str, list[Case]]:
    """The backend and the cases of check-labs' JSON (`--json`) or of its printed text."""
    text = path.read_text()
    if path.suffix == ".json":
        document = json.loads(text)
        cases = [
            Case(c["lab"], c["case"], c["language"], c["expected"], c["got"], c["ok"], c.get("message", ""),
                 {g["name"]: (g.get("measured"), "") for g in c.get("goals") or []})
            for c in document["cases"]
        ]  # fmt: skip
        for case, written in zip(cases, document["cases"], strict=True):
            _read_ncu(case, written.get("ncu_goals"))
        return document["backend"], cases
    backend, cases = "", []
    for line in text.splitlines():
        if header := HEADER.match(line):
            backend = header.group(1)
        elif found := LINE.match(line):
            mark, lab, case, language, got, _ = found.groups()
            cases.append(Case(lab, case, language, got, got, mark == "ok"))
        elif (expected := EXPECTED.match(line)) and cases:
            cases[-1].expected, cases[-1].message = expected.groups()
    return backend, cases


def read_session(path: Path | None) -> dict[str, str]:
    """Date, commit and GPU from the first lines device_session.sh prints."""
    facts = {"date": "unknown date", "commit": "unknown commit", "device": "unknown GPU"}
    if path is None:
        return facts
    for line in path.read_text().splitlines()[:5]:
        if re.match(r"^\d{4}-\d{2}-\d{2}T", line):
            facts["date"] = line.strip()
        elif line.startswith("commit "):
            facts["commit"] = line.split()[1]
        elif line.startswith("NVIDIA") or line.count(",") >= 3:
            facts["device"] = line.split(",")[0].strip()
    return facts


def add_goal_files(cases: list[Case], paths: list[Path]) -> list[str]:
    """Fill the figures the cases lack from curriculum_goals.py's files; each file's mark and name, for a legend."""
    legend = []
    by_key = {(c.lab, c.case): c for c in cases}
    for index, path in enumerate(paths):
        mark = chr(ord("a") + index)
        legend.append(f"[{mark}] `{path.as_posix()}`")
        for row in json.loads(path.read_text()):
            case = by_key.get((row["lab"], row["case"]))
            for goal in row.get("goals") or [] if case else []:
                if case.measured.get(goal["name"], (None, ""))[0] is None and goal.get("measured") is not None:
                    case.measured[goal["name"]] = (goal["measured"], mark)
    return legend


def _figure(value: tuple[float | None, str] | None) -> str:
    if value is None or value[0] is None:
        return "-"
    number, mark = value
    text = f"{number:.0f}" if abs(number - round(number)) < 0.05 else f"{number:.1f}"
    return f"{text} [{mark}]" if mark else text


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def exercise_section(lab: Lab, cases: list[Case], backend: str) -> list[str]:
    """One exercise: its goals with targets and the references' figures, then its samples and their verdicts."""
    lines = [f"### {lab.spec.title} (`{lab.spec.slug}`)", ""]
    order = [case.name for case in lab.cases]
    cases = sorted(cases, key=lambda c: order.index(c.case) if c.case in order else len(order))
    references = [c for c in cases if c.case.startswith("reference")]
    if lab.spec.goals:
        head = "| goal | target | " + " | ".join(f"{c.case}" for c in references) + " |"
        lines += [head, "|---|---|" + "---|" * len(references)]
        for goal in lab.spec.goals:
            comparison = "at most" if goal.metric in AT_MOST else "at least"
            target = f"{comparison} {goal.target:g} {UNITS.get(goal.metric, '')}".rstrip()
            if backend not in BACKENDS.get(goal.metric, frozenset()):
                not_here = f"not on {backend}: judged on {', '.join(sorted(BACKENDS[goal.metric]))}"
                cells = [
                    _figure(c.measured[goal.name]) if c.measured.get(goal.name, (None, ""))[1] == NCU else not_here
                    for c in references
                ]
            else:
                cells = [_figure(c.measured.get(goal.name)) for c in references]
            lines.append(f"| {_cell(goal.name)} | {target} | " + " | ".join(cells) + " |")
        lines.append("")
        failed: dict[str, list[str]] = {}  # why: the samples Nsight Compute measured nothing for
        for c in cases:
            if c.ncu_failed:
                failed.setdefault(c.ncu_failed, []).append(c.case)
        for why, names in failed.items():
            lines += [f"Nsight Compute measured nothing for {', '.join(names)}: {_cell(why)}.", ""]
    else:
        lines += ["No goals: correct is done.", ""]
    lines += ["| sample | language | must get | got | | goals measured |", "|---|---|---|---|---|---|"]
    for c in cases:
        figures = ", ".join(_figure(c.measured.get(g.name)) for g in lab.spec.goals) if c.measured else ""
        got = c.got if c.ok else f"{c.got}: {_cell(c.message)}" if c.message else c.got
        lines.append(
            f"| {c.case} | {c.language} | {c.expected} | {_cell(got)} | {'ok' if c.ok else '**FAIL**'} | {figures} |"
        )
    return lines + [""]


def measured_again(cases: list[Case], path: Path, session: Path | None) -> tuple[list[Case], str]:
    """The cases with a later run's (`path`, a check-labs JSON of some exercises) in place of the first run's for
    those exercises, and a sentence that says which exercises and where the later run was."""
    _, later = read_check_labs(path)
    again = sorted({c.lab for c in later})
    facts = read_session(session)
    where = f"{facts['device']}, {facts['date']}"  # its commit line may be the device copy's stale metadata
    sources = ", ".join(f"`{p.as_posix()}`" for p in [path, *([session] if session else [])])
    note = f"Measured again in a later run ({sources}: {where}): {', '.join(f'`{lab}`' for lab in again)}."
    return [c for c in cases if c.lab not in again] + later, note


def table(
    backend: str, cases: list[Case], facts: dict[str, str], sources: list[str], legend: list[str], again: str = ""
) -> str:
    labs = sorted(load_all()[1], key=lambda lab: (lab.module.number, lab.spec.order, lab.spec.slug))
    got = sum(c.ok for c in cases)
    lines = [
        "# Every exercise's goals, measured on a GPU",
        "",
        f"Generated by `bench/goals_table.py` from {', '.join(f'`{s}`' for s in sources)}: "
        f"{facts['device']}, {facts['date']}, commit {facts['commit']}, backend {backend}. "
        f"{got} of {len(cases)} samples got the verdict they must get. "
        'A goal\'s figure is what the run measured ("-": not measured there); '
        "a sample's goals measured are its figures in the order of the exercise's goals."
        + (f" {again}" if again else ""),
        "",
    ]
    ncu_sources = sorted({c.ncu_source for c in cases if c.ncu_source})
    if ncu_sources:
        lines += [
            f"Figures marked [{NCU}] were measured on the GPU by {' and '.join(ncu_sources)} (`check-labs "
            "--ncu-goals`): one launch of each accepted sample at the GPU size its goals are judged on. They are "
            "kernel-wide averages where the CPU tier reads its worst line: sectors per request are the worse of "
            "the global loads' and stores' (the loads' alone for a goal on loads), ways the worse of the shared "
            "loads' and stores' wavefronts per warp instruction, traffic the global requests' sectors times 32 "
            "bytes over the compulsory bytes at that size (asked of the L1, as the CPU tier counts them, not the "
            "DRAM's). Active lanes per request are read per SASS instruction from a second launch under the "
            "SourceCounters section: predicated-on threads per warp execution, the fewest of the global loads', "
            "stores' and atomics' (the loads' alone for a goal on loads), the CPU tier's worst site.",
            "",
        ]
    if legend:
        lines += [
            "Figures marked with a letter come from bench/curriculum_goals.py's files of earlier runs (each name says"
            " its GPU), where this run measured none: " + "; ".join(legend) + ".",
            "",
        ]
    lines += [
        "Refresh it from a device run: `bash bench/device_session.sh 320 check-labs-ncu` (or `check-labs`, "
        "without the [ncu] figures), then `python3 bench/goals_table.py --check-labs check-labs-cuda-ncu.json "
        "--session stdout.txt --out docs/curriculum-goals.md` (`--again FILE --again-session FILE` puts a later run's "
        "exercises in place of this run's).",
        "",
    ]
    seen = {c.lab for c in cases}
    module = None
    for lab in labs:
        if lab.spec.slug in seen:
            if lab.module.number != module:
                module = lab.module.number
                lines += [f"## Module {module}: {lab.module.title}", ""]
            lines += exercise_section(lab, [c for c in cases if c.lab == lab.spec.slug], backend)
    missing = [lab.spec.slug for lab in labs if lab.spec.slug not in seen]
    if missing:
        lines += [f"Not in this run: {', '.join(missing)}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-labs", type=Path, required=True)
    parser.add_argument("--session", type=Path, default=None)
    parser.add_argument("--goals", type=Path, nargs="*", default=[])
    parser.add_argument("--out", type=Path, required=True)
    # a later run's check-labs JSON of some exercises (and its stdout.txt): its cases replace the first run's
    parser.add_argument("--again", type=Path, default=None)
    parser.add_argument("--again-session", type=Path, default=None)
    args = parser.parse_args(argv)
    backend, cases = read_check_labs(args.check_labs)
    if not cases:
        parser.error(f"{args.check_labs}: no check-labs cases found")
    again = ""
    if args.again is not None:
        cases, again = measured_again(cases, args.again, args.again_session)
    legend = add_goal_files(cases, args.goals)
    sources = [p.as_posix() for p in [args.check_labs, *([args.session] if args.session else [])]]
    args.out.write_text(table(backend, cases, read_session(args.session), sources, legend, again))
    print(f"{args.out}: {len(cases)} samples in {len({c.lab for c in cases})} exercises")
    return 0


if __name__ == "__main__":
    sys.exit(main())
