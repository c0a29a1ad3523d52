"""CuPy's on-disk kernel cache: private to each job, seeded with the harness's own kernels compiled beforehand.

CuPy keeps compiled binaries in CUPY_CACHE_DIR (else `~/.cupy/kernel_cache`,
with HOME read when CuPy is imported). CuPy 14 builds its cache backend once
per process, so the variable must be set before the first compilation, and a
process that has already compiled is pointed elsewhere only by replacing that
backend (`use` does both). A job's child points CuPy at a fresh folder of its
private /tmp before anything is compiled (`prepare`), so one learner's cached
binary is never loaded for another's job, and every file in it belongs to the
job's own user (a spare compiles as root before it drops to the job's uid; `give_to`
hands the folder over).

The seed (`WARPLAB_KERNEL_CACHE`, default `~/.cache/warplab/cupy-kernels`) is
filled in the worker's own trusted process when it starts (`warm`, run by
`python -m gpu_worker calibrate --warm-kernel-cache`) with the kernels the
harness itself compiles in every job (the timing harness's blocking kernel, the
launch guard's fingerprint and the device check's elementwise steps for every lab).
The sandbox binds it read-only and `prepare` copies it into the job's folder,
so a cold child loads those binaries instead of running NVRTC for them.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

SEED_ENV = "WARPLAB_KERNEL_CACHE"
CUPY_ENV = "CUPY_CACHE_DIR"


def seed_dir() -> Path:
    """Where the worker keeps the harness's compiled kernels."""
    configured = os.environ.get(SEED_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "warplab" / "cupy-kernels"


def use(path: str | os.PathLike[str]) -> None:
    """Make CuPy read and write its kernel cache in `path` from now on, in this process."""
    os.environ[CUPY_ENV] = str(path)
    compiler = sys.modules.get("cupy.cuda.compiler")
    if compiler is None or not hasattr(compiler, "_kernel_cache_backend"):
        return  # CuPy not imported yet, or a CuPy that reads the variable at every compilation
    try:
        from cupy.cuda._compiler_cache import DiskKernelCacheBackend
    except ImportError:
        return
    backend = DiskKernelCacheBackend(str(path))
    setter = getattr(compiler, "_set_kernel_cache_backend", None)
    if callable(setter):
        setter(backend)
    else:
        compiler._kernel_cache_backend = backend  # type: ignore[attr-defined]


def prepare(parent: str | os.PathLike[str] | None = None, seed: Path | None = None) -> Path:
    """A fresh private cache folder under `parent` (the temp dir), holding a copy of the seed, in use."""
    folder = Path(tempfile.mkdtemp(prefix="cupy-kernels-", dir=parent))
    seed = seed_dir() if seed is None else seed
    if seed.is_dir():
        for entry in seed.iterdir():
            if entry.is_file() and not entry.name.startswith("tmp"):
                try:
                    shutil.copyfile(entry, folder / entry.name)
                except OSError:
                    continue  # an unreadable seed file costs one compilation, nothing else
    use(folder)
    return folder


def give_to(uid: int, gid: int) -> None:
    """Hand the cache folder in use (and its files) to the job's user, before the process drops to it."""
    folder = os.environ.get(CUPY_ENV)
    if not folder or not os.path.isdir(folder) or os.getuid() != 0:
        return
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)
    os.chown(folder, uid, gid)


def warm(cp: Any, folder: Path | None = None, also: Iterable[Callable[[Any, Path], object]] = ()) -> list[str]:
    """Compile the harness's own kernels into the seed folder (a trusted process): the files it now holds.

    `also` are more compilers of trusted kernels, each called with CuPy and the folder (the cli passes the
    device check's, `backends.device_check.warm_checks`, which this package may not import).
    """
    from gpu_worker.measurement.timing import compile_harness

    folder = seed_dir() if folder is None else folder
    folder.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get(CUPY_ENV)
    use(folder)
    try:
        compile_harness(cp)  # first in this process, or CuPy's in-memory copy answers and nothing is written
        for compile_more in also:
            compile_more(cp, folder)
    finally:  # what this process compiles next (the calibration's kernels) stays out of the seed
        use(previous or Path.home() / ".cupy" / "kernel_cache")
    folder.chmod(0o755)  # the sandbox's user reads it through a read-only bind
    names = []
    for entry in folder.iterdir():
        if entry.is_file():
            entry.chmod(0o644)
            names.append(entry.name)
    return sorted(names)
