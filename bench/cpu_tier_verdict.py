"""The CPU tier's verdict latency, side by side: vector-add's references through the engine of two or more trees.

    .venv/bin/python bench/cpu_tier_verdict.py before=/tmp/before after=. [--rounds 4] [--jobs 4] [--think 1.5]
                                               [--sources resubmitted,new] [--out FILE]

Each tree is a checkout of this repository (a `git archive` of the commit to compare is enough). Rounds
alternate the trees, so the machine's load (2 shared cores here) falls on each alike: in a round, every tree
runs, in a process of its own with its own `gpu_worker` and an empty compile cache, one job that starts its
warm spares and then `--jobs` jobs per language (CUDA C++ and Numba, alternating) of vector-add's reference
on the sim backend, `--think` seconds apart (a learner reading the verdict). `resubmitted`: every job sends
the reference as it is (the first, uncounted, fills the cache); `new`: each job's source differs from every
other's by a comment line, a first submission. Per job: seconds from the job to its first `check` event (the
outputs judged), to the `compiled` event that carries the SASS, and to its `done` event (the verdict: a worker
reports the result as the engine tells it, `run_job`'s `on_result`; on the CPU tier a new source's SASS may
follow it). Prints a Markdown table of p50, p90 and max per source
kind, language and tree, with the load average, and writes it to `--out` when given.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LANGUAGES = ("cuda", "numba")


def _jobs(count: int, think: float, fresh: bool) -> list[dict[str, Any]]:
    """In a tree's own process: a first job to start the spares, then `count` jobs per language.

    `fresh`: each job's source differs from every other's by a comment line (a first submission: nothing of
    it is in the worker's compile cache); else every job resubmits the reference.
    """
    os.environ["WARPLAB_SPARE_SANDBOX"] = "1"
    os.environ["WARPLAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="verdict-bench-cache-")  # this run's own cache
    sys.path.insert(0, os.getcwd())  # the tree under test, not this script's
    from gpu_worker.cli import make_job
    from gpu_worker.engine import run_job, start_first_spare
    from gpu_worker.exercise.labspec import find_lab
    from gpu_worker.isolation import spare

    lab = find_lab("vector-add")
    start_first_spare("sim")
    found = []
    try:
        for number in range(2 * count + 1):
            language = LANGUAGES[number % 2]
            source = lab.references[language]
            if fresh:
                source += f"\n{'//' if language == 'cuda' else '#'} submission {number} of {os.getpid()}\n"
            job = make_job(lab.exercise_ref(language), source, backend="sim")
            seen: dict[str, float] = {}
            clock = time.perf_counter()

            def note(event: Any, seen: dict[str, float] = seen, clock: float = clock) -> None:
                key = "listing" if event.type == "compiled" and "compiled" in seen else event.type
                seen.setdefault(key, time.perf_counter() - clock)

            result = run_job(job, note, backend="sim")
            seen.setdefault("done", time.perf_counter() - clock)  # told with the result: when a worker reports it
            if result.verdict != "accepted":
                raise SystemExit(f"{language}: {result.verdict}: {result.message}")
            if number:  # the first job starts the spares for these limits
                found.append({"language": language, **{k: seen.get(k) for k in ("check", "listing", "done")}})
            time.sleep(think)
    finally:
        spare.shutdown()
    return found


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="NAME=PATH, two or more")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--think", type=float, default=1.5)
    parser.add_argument("--out")
    parser.add_argument("--sources", default="resubmitted,new", help="resubmitted, new (each job's own), or both")
    parser.add_argument("--worker", nargs=3, metavar=("JOBS", "THINK", "SOURCES"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        print(json.dumps(_jobs(int(options.worker[0]), float(options.worker[1]), options.worker[2] == "new")))
        return
    trees = [tuple(t.split("=", 1)) for t in options.trees]
    kinds = options.sources.split(",")
    results: dict[tuple[str, str], list[dict[str, Any]]] = {(n, k): [] for n, _ in trees for k in kinds}
    loads = [os.getloadavg()]
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    for _ in range(options.rounds):
        for kind in kinds:
            for name, path in trees:
                command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(options.jobs)]
                child = subprocess.run([*command, str(options.think), kind], cwd=path, capture_output=True, text=True)
                if child.returncode:
                    raise SystemExit(f"{name}: {child.stderr[-2000:]}")
                results[name, kind] += json.loads(child.stdout.strip().splitlines()[-1])
    loads.append(os.getloadavg())
    lines = [
        f"# CPU tier: vector-add's verdict latency on sim, side by side ({started})",
        "",
        f"CPU tier, this machine ({os.cpu_count()} cores, shared with other sessions), {platform.machine()}, "
        f"Python {platform.python_version()}. {options.rounds} rounds alternating the trees; per round and tree, "
        f"{options.jobs} jobs per language after one that starts the spares, {options.think:g} s apart. "
        f"Load average (1, 5, 15 min) at the start {' '.join(f'{v:.2f}' for v in loads[0])}, "
        f"at the end {' '.join(f'{v:.2f}' for v in loads[-1])}. Seconds from the job to its first `check` (the "
        "outputs judged), to the `compiled` event with the SASS, and to `done` (the verdict, told with the "
        "result a worker reports).",
        "",
        "| source | language | tree | jobs | check p50 | SASS p50 | done p50 | done p90 | done max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, language, name in [(k, lang, n) for k in kinds for lang in LANGUAGES for n, _ in trees]:
        rows = [r for r in results[name, kind] if r["language"] == language]
        check = [r["check"] for r in rows]
        listing = [r["listing"] for r in rows if r["listing"] is not None]
        done = [r["done"] for r in rows]
        sass = f"{statistics.median(listing):.2f}" if listing else "-"
        lines.append(
            f"| {kind} | {language} | {name} | {len(rows)} | {statistics.median(check):.2f} | {sass} | "
            f"{statistics.median(done):.2f} | {_percentile(done, 0.9):.2f} | {max(done):.2f} |"
        )
    _emit("\n".join(lines) + "\n", options.out)


def _emit(text: str, out: str | None) -> None:
    """The table on the terminal, and in `out` when given."""
    print(text)
    if out:
        Path(out).write_text(text)


if __name__ == "__main__":
    main()
