"""A job's plan, made before anything runs: whether it may run at all, and its runs.

`precheck` says why a job must be rejected (an empty file, one over the size limit, no kernel of
the exercise's name). `runs` is one launch per size of the backend, each with its seed, then the
learner's block-size sweep points (GPU only), each marked `sweep_block` and judged apart (`is_sweep`).
A launch over the device's limits raises `LaunchRejected`.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_worker.exercise.inputs import job_seed
from gpu_worker.exercise.launch import LaunchRejected, resolve_launch
from gpu_worker.protocol import MAX_SOURCE_BYTES, Job


def _entry_present(language: str, source: str, entry: str) -> bool:
    name = re.escape(entry)
    if language in ("numba", "triton"):
        return re.search(rf"^\s*def\s+{name}\s*\(", source, re.MULTILINE) is not None
    return re.search(rf"\b{name}\s*\(", source) is not None


def precheck(job: Job) -> str | None:
    """Why this job must be rejected before anything runs, or None."""
    exercise = job.exercise
    if not job.source.strip():
        return "your file is empty"
    size = len(job.source.encode("utf-8", errors="replace"))
    if size > MAX_SOURCE_BYTES:
        return f"your file is {size} bytes, over the limit of {MAX_SOURCE_BYTES} bytes"
    if not _entry_present(exercise.language, job.source, exercise.entry):
        kind = "def" if exercise.language in ("numba", "triton") else 'extern "C" __global__ void'
        return f"no kernel named {exercise.entry!r} in your file (expected `{kind} {exercise.entry}(...)`)"
    return None


def runs(job: Job, backend: str) -> list[dict[str, Any]]:
    """One launch per size of this backend; LaunchRejected if any is over the device's limits."""
    harness = job.exercise.harness
    size_sets = harness.sizes.get(backend)  # type: ignore[call-overload]
    if not size_sets:
        raise LaunchRejected(f"this exercise has no sizes for the {backend} backend")
    language = job.exercise.language
    if language == "triton" and harness.triton is None:
        raise LaunchRejected("this exercise does not say how to launch a Triton kernel (its lab.yaml has no 'triton')")
    # A learner's chosen block size is a CUDA launch; a Triton kernel's block is its num_warps.
    spec = harness.launch_for(language) if language == "triton" else job.launch or harness.launch
    planned: list[dict[str, Any]] = []
    for index, sizes in enumerate(size_sets):
        config = resolve_launch(spec, sizes)
        seed = job_seed(harness.seed, job.submission_id, index)
        run = {"sizes": sizes, "seed": seed, **config.as_dict(), "threads_per_block": config.threads_per_block}
        planned.append(run)
    return planned + sweep_runs(job, backend, planned[-1])


SWEEP_GPU_BUDGET_S = 0.1  # a sweep point's timing budget: a curve needs less precision than a graded time


def sweep_refusal(job: Job, backend: str) -> str | None:
    """Why a block-size sweep the learner asked for does not run here (None: it runs, or none was asked):
    said to them as the job starts, never silently nothing."""
    if job.launch is None or not job.launch.sweep_blocks:
        return None
    if backend != "cuda":
        return (
            "no block-size sweep on this run: it went to the CPU tier, where nothing is timed and a curve of "
            "simulated threads would measure nothing; the sweep runs when a GPU worker serves the lab"
        )
    if job.exercise.language == "triton":
        return "no block-size sweep for Triton: its block is num_warps, set in the kernel's launch options"
    return None


def sweep_runs(job: Job, backend: str, largest: dict[str, Any]) -> list[dict[str, Any]]:
    """The learner's block-size sweep: one more run per other block size they asked for, at the largest size.

    GPU only (a curve of simulated threads would time nothing). Each point is checked and timed like a size,
    but judged apart (`sweep_block` marks it): its checks and numbers draw the curve, never the verdict.
    """
    choices = job.exercise.harness.launch_choices
    wanted = job.launch.sweep_blocks if job.launch is not None else []
    if backend != "cuda" or not wanted or choices is None or job.exercise.language == "triton":
        return []
    runs = []
    for k, block in enumerate(dict.fromkeys(wanted)):
        if block == largest["threads_per_block"]:
            continue
        try:
            config = resolve_launch(choices.launch(block), largest["sizes"])
        except (ValueError, LaunchRejected):
            continue  # a block size the exercise does not offer, or over this device's limits: off the curve
        seed = job_seed(job.exercise.harness.seed, job.submission_id, 500 + k)
        runs.append(
            {
                "sizes": largest["sizes"],
                "seed": seed,
                **config.as_dict(),
                "threads_per_block": config.threads_per_block,
                "sweep_block": block,
                "gpu_budget_s": SWEEP_GPU_BUDGET_S,
            }
        )
    return runs


def is_sweep(run: dict[str, Any]) -> bool:
    """Whether this run is a point of the learner's block-size sweep, not one of the exercise's sizes."""
    return "sweep_block" in run
