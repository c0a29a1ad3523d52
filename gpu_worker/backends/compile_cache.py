"""Compile once: the engine keeps what a GPU job's compile produced, keyed by everything that decides it.

A class resubmits: the same starter, a restored draft, a shared solution, a resubmission after reading the
verdict. Compiling is the costliest host step of a warm GPU job (Numba about 0.5 s with its compiler warm,
the CUDA C++ listing 0.7 s of NVRTC, ptxas and nvdisasm), so the engine, on the trusted side, keeps:

- `answer`: a Numba or Triton compile process's answer (PTX, the kernel's symbol, the compile report; for
  Triton its cubin and metadata), which the measuring process loads instead of compiling again;
- `listing`: a CUDA C++ kernel's PTX and SASS listing, made by the measuring process after a first run; on
  the CPU tier (sim) every language's SASS listing, so a resubmission's verdict does not wait for nvdisasm
  (the key's device is then the CPU tier's, with nvcc's release).

The key is a SHA-256 of the language, the entry, the whole source, the exercise's argument types, Triton's
options, the GPU's name and the toolchain's versions, computed by the engine from the job it holds, never
from anything a child said. So an entry can only ever be served to the very source that produced it: a
learner who subverted their own compile process poisons nothing but their own identical resubmission,
which would have been subverted the same way. Entries are written atomically (a temporary file renamed)
under the worker's cache folder, outside every sandbox; the oldest are removed past `MAX_ENTRIES`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from gpu_worker.protocol import Job

CACHE_ENV = "WARPLAB_CACHE_DIR"
MAX_ENTRIES = 2000
MAX_ENTRY_BYTES = 8 * 1024 * 1024  # a kernel's PTX, cubin and listing are kilobytes; anything this big is odd
TOOLCHAIN = ("numba-cuda", "numba", "triton", "cupy-cuda12x", "cupy-cuda13x", "nvidia-cuda-nvrtc-cu12", "cuda-bindings")
KINDS = ("answer", "listing")


def folder() -> Path:
    """The worker's compile cache: `$WARPLAB_CACHE_DIR/compiled` (default `~/.cache/warplab/compiled`)."""
    base = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "warplab")
    return Path(base) / "compiled"


@functools.cache
def _versions() -> dict[str, str]:
    """The toolchain's versions: read once per process (a job's key used to read seven package records)."""
    found = {}
    for name in TOOLCHAIN:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return {"python": sys.version.split()[0], **found}


def key(job: Job, device: str) -> str:
    """The hex key of this job's compile on `device` (a GPU's name: one model, one architecture)."""
    exercise = job.exercise
    harness = exercise.harness
    triton = harness.triton.model_dump(mode="json") if harness.triton is not None else None
    described = {
        "language": exercise.language,
        "entry": exercise.entry,
        "source": job.source,
        "args": [a.model_dump(mode="json") for a in harness.args_for(exercise.language)],
        "triton": triton if exercise.language == "triton" else None,
        "device": device,
        "toolchain": _versions(),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def load(digest: str) -> dict[str, Any]:
    """What is kept for this key (`answer` and/or `listing`); empty when nothing is, or it cannot be read."""
    path = folder() / f"{digest}.json"
    try:
        if path.stat().st_size > MAX_ENTRY_BYTES:
            return {}
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(entry, dict) or entry.get("key") != digest:
        return {}
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: the last to be removed
    return {k: entry[k] for k in KINDS if isinstance(entry.get(k), dict)}


def store(digest: str, kept: dict[str, Any]) -> bool:
    """Keep `answer` and/or `listing` for this key (merged with what is kept already); False if not kept."""
    kept = {k: v for k, v in kept.items() if k in KINDS and isinstance(v, dict)}
    if not kept:
        return False
    entry = {"key": digest, **load(digest), **kept}
    text = json.dumps(entry)
    if len(text) > MAX_ENTRY_BYTES:
        return False
    target = folder()
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=target, suffix=".tmp", delete=False) as handle:
            handle.write(text)
        os.replace(handle.name, target / f"{digest}.json")
    except OSError:
        return False
    _trim(target)
    return True


def _trim(target: Path) -> None:
    """Remove the least recently used entries past MAX_ENTRIES."""
    entries = list(target.glob("*.json"))
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort(key=lambda p: p.stat().st_mtime)
    for stale in entries[: len(entries) - MAX_ENTRIES]:
        with contextlib.suppress(OSError):
            stale.unlink()
