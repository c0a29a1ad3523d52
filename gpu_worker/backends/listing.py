"""PTX and SASS with source lines for a kernel the cuda backend already runs, taken after its measurements.

The GPU path compiles through NVRTC (C++) or numba-cuda's own dispatcher
(Python), which keep neither a readable PTX with line information nor a
cubin. So, once the job's sizes are checked and timed (nothing here delays
the first figure), the child compiles the same source again for reading:
NVRTC to PTX for the device's virtual architecture (C++), or
`numba.cuda.compile_ptx(..., lineinfo=True)` (Python); then `ptxas` and
`nvdisasm`, as on the simulator path (`gpu_worker.backends.sass`). Each step
that is missing on the worker leaves a note instead of failing the job.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpu_worker.backends import ptxas, sass


def sass_from_ptx(
    ptx: str, symbol: str, source: str, path: Path, arch: str = ptxas.ARCH, name: str | None = None
) -> tuple[str | None, str | None]:
    """(annotated SASS, None), or (None, why not): `ptx` written to `path`, assembled, disassembled."""
    path.write_text(ptx)
    try:
        ptxas.assemble(path, arch)
    except (OSError, RuntimeError) as exc:
        return None, f"no SASS: {exc}"[:300]
    return sass.excerpt(path.with_suffix(".cubin"), symbol, source, name)


def nvrtc_ptx(source: str, options: tuple[str, ...], arch: str) -> str:
    """CUDA C++ to PTX for `arch` (sm_90 → compute_90) with CuPy's NVRTC bindings."""
    from cupy_backends.cuda.libs import nvrtc

    program = nvrtc.createProgram(source, "submission.cu", (), ())
    try:
        nvrtc.compileProgram(program, [*options, f"-arch=compute_{arch.removeprefix('sm_')}"])
        ptx: Any = nvrtc.getPTX(program)
    finally:
        nvrtc.destroyProgram(program)
    text = ptx.decode() if isinstance(ptx, bytes) else str(ptx)
    return text.rstrip("\x00")


def numba_ptx(py_func: Any, signature: Any, arch: str) -> str:
    """A Python kernel's PTX with line information for `arch`."""
    from numba import cuda

    major, minor = arch.removeprefix("sm_")[:-1], arch[-1]
    ptx, _ = cuda.compile_ptx(py_func, signature, cc=(int(major), int(minor)), lineinfo=True)
    return str(ptx)


def listing(language: str, source: str, entry: str, arch: str, workdir: Path, **compiled: Any) -> dict[str, Any]:
    """{ptx_excerpt, sass_excerpt, notes} for a kernel compiled on the GPU path; never raises.

    `compiled` carries what the language needs: `options` (C++), or `py_func`
    and `signature` (Python).
    """
    notes: list[str] = []
    try:
        if language == "cuda":
            ptx = nvrtc_ptx(source, compiled["options"], arch)
        else:
            ptx = numba_ptx(compiled["py_func"], compiled["signature"], arch)
    except Exception as exc:  # a courtesy: the job already ran and was judged
        return {"ptx_excerpt": None, "sass_excerpt": None, "notes": [f"no PTX listing: {exc}"[:300]]}
    symbols = [n for n in ptxas.entries(ptx) if entry in n]
    symbol = symbols[0] if symbols else entry
    excerpt = ptxas.excerpt(ptx, symbol).replace(symbol, entry)  # a mangled Numba name is unreadable
    sass_text, missing = sass_from_ptx(ptx, symbol, source, workdir / "listing.ptx", arch, entry)
    if missing:
        notes.append(missing)
    return {"ptx_excerpt": excerpt, "sass_excerpt": sass_text, "notes": notes}
