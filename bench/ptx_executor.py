"""Simulated threads per second: the CPU tier's PTX executor against Numba's CUDA simulator, at equal sizes.

    .venv/bin/python bench/ptx_executor.py [--vector-add-n 16384] [--transpose-n 128] [--repeats 3] [--jobs 7]
                                           [--out FILE]

For vector-add and transpose, the lab's Numba reference runs on Numba's simulator (in a child process of
this script: the simulator replaces `numba.cuda` for its whole process) and its PTX, compiled by the
engine's own `numba_ptx`, runs on the executor; the lab's CUDA C++ reference, compiled by nvcc, runs on
the executor too. Every run's output is checked against the lab's expected array. The executor's
launches are timed untraced and traced (the engine traces a job's first launch for the memory report);
the best of `--repeats` is kept. Then `--jobs` whole jobs of vector-add's references (CUDA C++ and Numba)
go through the engine on the sim backend, warm spares on, as a submit does: the verdict's latency (the
engine's wall time from the job to its result), p50 and max. Prints a Markdown table, and writes it to
`--out` when given.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LABS = {"vector-add": "01-silicon/vector-add", "transpose": "02-three-rules/transpose"}


def _case(slug: str, n: int) -> tuple[Any, Any, dict[str, int], Any]:
    from gpu_worker.exercise.labspec import find_lab
    from gpu_worker.exercise.launch import resolve_launch

    lab = find_lab(slug)
    harness = lab.spec.harness()
    sizes = {**harness.sizes["sim"][0], "n": n}
    return lab, harness, sizes, resolve_launch(harness.launch, sizes)


def _check(harness: Any, language: str, sizes: dict[str, int], values: dict[str, Any]) -> bool:
    from gpu_worker.exercise import checker
    from gpu_worker.exercise.formula import array_value
    from gpu_worker.exercise.inputs import formula_names

    args = harness.args_for(language)
    inputs = formula_names(args, sizes, [values[a.name] for a in args])
    return all(
        checker.compare(a.name, np.asarray(array_value(harness.expected[a.name], inputs)), values[a.name],
                        harness.tolerance, sizes).passed
        for a in args if a.role == "out"
    )  # fmt: skip


def simulator(slug: str, n: int) -> dict[str, Any]:
    """One launch of the Numba reference on Numba's simulator (run in a process of its own)."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from gpu_worker.exercise.inputs import make_arguments

    lab, harness, sizes, config = _case(slug, n)
    spec = importlib.util.spec_from_file_location("reference", lab.folder / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = getattr(module, lab.spec.entry)
    args = harness.args_for("numba")
    values = make_arguments(args, sizes, 1)
    clock = time.perf_counter()
    kernel[config.grid, config.block](*[values[a.name] for a in args])
    seconds = time.perf_counter() - clock
    return {"seconds": seconds, "threads": config.threads, "correct": _check(harness, "numba", sizes, values)}


def _ptx(lab: Any, language: str, harness: Any) -> tuple[str, str]:
    folder = Path(tempfile.mkdtemp(prefix="ptx-bench-"))
    if language == "cuda":
        from gpu_worker.backends import nvcc

        ptx, _ = nvcc.compile_ptx((lab.folder / "reference.cu").read_text(), folder)
        assert ptx is not None
        return ptx, lab.spec.entry
    from gpu_worker.backends import numba_ptx
    from gpu_worker.backends.compile_server import types_spec

    path = folder / "submission.py"
    path.write_text((lab.folder / "reference.py").read_text())
    found = numba_ptx.analyse(path, lab.spec.entry, types_spec(harness.args_for("numba")), listing=False)
    return found["ptx"], found["symbol"]


def executor(slug: str, n: int, language: str, repeats: int) -> dict[str, Any]:
    """The best of `repeats` launches on the executor, untraced and traced, of the lab's reference PTX."""
    from gpu_worker.exercise.inputs import make_arguments
    from gpu_worker.ptx.abi import arguments
    from gpu_worker.ptx.executor import Executor, Launch
    from gpu_worker.ptx.parser import parse
    from gpu_worker.ptx.report import MemoryTrace

    lab, harness, sizes, config = _case(slug, n)
    ptx, symbol = _ptx(lab, language, harness)
    module = parse(ptx)
    kernel = module.kernels[symbol]
    args = harness.args_for(language)
    best: dict[str, float] = {}
    correct = True
    instructions = 0
    for traced in (False, True):
        for _ in range(repeats):
            values = make_arguments(args, sizes, 1)
            clock = time.perf_counter()
            params, memory = arguments(kernel, language, [a.name for a in args], [values[a.name] for a in args])  # type: ignore[arg-type]
            ex = Executor(module, kernel, params, memory, trace=MemoryTrace() if traced else None)
            stats = ex.run(Launch(tuple(config.grid), tuple(config.block), config.shared_bytes))  # type: ignore[arg-type]
            seconds = time.perf_counter() - clock
            key = "traced" if traced else "untraced"
            best[key] = min(best.get(key, seconds), seconds)
            correct &= _check(harness, language, sizes, values)
            instructions = stats.thread_instructions
    return {**best, "threads": config.threads, "correct": correct, "thread_instructions": instructions}


def verdict_latency(language: str, jobs: int) -> list[tuple[float, float]]:
    """(seconds to the first check event, seconds to the result) per job of vector-add's reference on sim."""
    os.environ["WARPLAB_SPARE_SANDBOX"] = "1"
    from gpu_worker.cli import make_job
    from gpu_worker.engine import run_job, start_first_spare
    from gpu_worker.exercise.labspec import find_lab
    from gpu_worker.isolation import spare

    lab = find_lab("vector-add")
    start_first_spare("sim")
    found = []
    try:
        for number in range(jobs + 1):
            job = make_job(lab.exercise_ref(language), lab.references[language], backend="sim")
            checked: list[float] = []
            clock = time.perf_counter()

            def note(event: Any, checked: list[float] = checked, clock: float = clock) -> None:
                if event.type == "check" and not checked:
                    checked.append(time.perf_counter() - clock)

            result = run_job(job, note, backend="sim")
            if number:  # the first job starts the spares for these limits
                found.append((checked[0], time.perf_counter() - clock))
            assert result.verdict == "accepted", result.message
    finally:
        spare.shutdown()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vector-add-n", type=int, default=16384)
    parser.add_argument("--transpose-n", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=7)
    parser.add_argument("--out")
    parser.add_argument("--simulator", nargs=2, metavar=("LAB", "N"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.simulator:
        print(json.dumps(simulator(options.simulator[0], int(options.simulator[1]))))
        return
    rows = []
    for slug, n in (("vector-add", options.vector_add_n), ("transpose", options.transpose_n)):
        child = subprocess.run(
            [sys.executable, __file__, "--simulator", slug, str(n)], capture_output=True, text=True, check=True
        )
        sim = json.loads(child.stdout.strip().splitlines()[-1])
        sim_rate = sim["threads"] / sim["seconds"]
        rows.append((slug, n, "Numba simulator", "numba", sim["threads"], sim["seconds"], None, sim_rate, 1.0,
                     sim["correct"]))  # fmt: skip
        for language in ("numba", "cuda"):
            found = executor(slug, n, language, options.repeats)
            rate = found["threads"] / found["untraced"]
            rows.append((slug, n, "PTX executor", language, found["threads"], found["untraced"], found["traced"],
                         rate, rate / sim_rate, found["correct"]))  # fmt: skip
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# PTX executor vs Numba's CUDA simulator, {stamp}",
        "",
        f"Machine: CPU tier, {os.cpu_count()} cores shared with other sessions ({platform.machine()}), "
        f"load average {os.getloadavg()[0]:.1f} at the start, "
        f"Python {platform.python_version()}, NumPy {np.__version__}. Best of {options.repeats} executor launches; "
        "one simulator launch. Threads/s = simulated GPU threads / wall seconds of one launch.",
        "",
        "| lab | n | runs on | PTX from | threads | seconds | traced s | threads/s | vs simulator | output ok |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for slug, n, where, language, threads, seconds, traced, rate, ratio, ok in rows:
        traced_text = f"{traced:.4f}" if traced is not None else "-"
        lines.append(
            f"| {slug} | {n} | {where} | {language} | {threads} | {seconds:.4f} | {traced_text} | {rate:,.0f} | "
            f"{ratio:.1f}x | {ok} |"
        )
    if options.jobs:
        lines += [
            "",
            f"Latency of vector-add's reference through the engine on sim (warm spares, {options.jobs} jobs after "
            "one that starts them): seconds from the job to its first `check` event (the outputs judged) and to the "
            "result (`done`, which waits for the SASS listing, made after the run).",
            "",
            "| language | check p50 s | check max s | done p50 s | done max s |",
            "|---|---|---|---|---|",
        ]
        for language in ("cuda", "numba"):
            timed = verdict_latency(language, options.jobs)
            checks, dones = sorted(c for c, _ in timed), sorted(d for _, d in timed)
            middle = len(timed) // 2
            lines.append(
                f"| {language} | {checks[middle]:.2f} | {checks[-1]:.2f} | {dones[middle]:.2f} | {dones[-1]:.2f} |"
            )
    text = "\n".join(lines) + "\n"
    print(text)
    if options.out:
        Path(options.out).write_text(text)


if __name__ == "__main__":
    main()
