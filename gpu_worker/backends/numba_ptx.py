"""Compile a learner's Numba kernel to sm_90 PTX and assemble it with `ptxas -v`, without a GPU.

Run as `python -m gpu_worker.backends.numba_ptx SOURCE ENTRY TYPES FD` inside
the sandbox, beside the simulator process: the simulator replaces `numba.cuda`
for the whole process once NUMBA_ENABLE_CUDASIM is set, so the real compiler
needs a process of its own. It writes one JSON document to fd FD:
`{"ok": true, "info": CompileInfo}` or `{"ok": false, "kind": "compile_error" |
"import" | "unavailable", "message", "diagnostic"}`.

Numba's typing errors are the learner's compile errors (the simulator would
run code a GPU cannot compile). A toolkit without NVRTC (only nvcc and libnvvm,
as on CPU workers) is fine: NVRTC is only asked which architectures it knows,
and we name the architecture ourselves.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
os.environ["NUMBA_FORCE_CUDA_CC"] = "9.0"
CC = (9, 0)


def _allow_missing_nvrtc() -> None:
    from numba.cuda import cuda_paths

    original = cuda_paths._get_nvrtc_path  # type: ignore[attr-defined]

    def nvrtc_path_or_none():
        try:
            return original()
        except Exception:  # no NVRTC: only nvvm and libdevice are needed for PTX
            return cuda_paths._env_path_tuple("<missing>", None)

    cuda_paths._get_nvrtc_path = nvrtc_path_or_none  # type: ignore[attr-defined]


def signature(types_spec: list[list[Any]]) -> tuple:
    """Numba types from `[[dtype, ndim], ...]`: C-contiguous arrays for ndim > 0, scalars for 0."""
    from numba import types

    out = []
    for dtype, ndim in types_spec:
        scalar = getattr(types, dtype)
        out.append(types.Array(scalar, int(ndim), "C") if ndim else scalar)
    return tuple(out)


def analyse(source_path: Path, entry: str, types_spec: list[list[Any]]) -> dict[str, Any]:
    from gpu_worker.backends import ptxas, sass
    from gpu_worker.diagnostics import from_exception, from_numba_error
    from gpu_worker.protocol import CompileInfo

    try:
        import numba_cuda
        from numba import cuda
        from numba.core.errors import NumbaError

        _allow_missing_nvrtc()
    except Exception as exc:
        return {"ok": False, "kind": "unavailable", "message": f"numba-cuda is not usable here: {exc}"}
    from gpu_worker.backends.learner_module import import_learner_module

    try:
        module = import_learner_module(source_path)
        kernel = getattr(module, entry)
        py_func = getattr(kernel, "py_func", kernel)
    except BaseException as exc:  # the simulator process reports the learner's import errors
        return {"ok": False, "kind": "import", "message": str(exc)[:500]}
    source = source_path.read_text()
    try:
        ptx, _ = cuda.compile_ptx(py_func, signature(types_spec), cc=CC, lineinfo=True)
    except NumbaError as exc:
        diagnostic = from_numba_error(exc, str(source_path), source)
        return {
            "ok": False,
            "kind": "compile_error",
            "message": diagnostic.message,
            "diagnostic": diagnostic.model_dump(),
        }
    except Exception as exc:
        if any(f.filename == str(source_path) for f in _frames(exc)):
            diagnostic = from_exception(exc, str(source_path))
            return {
                "ok": False,
                "kind": "compile_error",
                "message": diagnostic.message,
                "diagnostic": diagnostic.model_dump(),
            }
        return {"ok": False, "kind": "unavailable", "message": f"PTX compilation failed: {exc}"[:1000]}
    info = CompileInfo(tool=f"numba-cuda {numba_cuda.__version__} (NVVM) + ptxas {ptxas.version()}", arch="sm_90")
    kernels = [name for name in ptxas.entries(ptx) if entry in name]
    symbol = kernels[0] if kernels else entry
    info.ptx_excerpt = ptxas.excerpt(ptx, symbol).replace(symbol, entry)  # the mangled name is unreadable
    ptx_path = source_path.with_name("numba-kernel.ptx")
    ptx_path.write_text(ptx)
    try:
        stats, _ = ptxas.assemble(ptx_path)
    except (OSError, RuntimeError) as exc:
        info.entry_symbol = symbol
        info.notes.append(f"registers and spills unknown: {exc}"[:500])
    else:
        if symbol in stats:
            stats[symbol].fill(info)
        else:
            info.notes.append("ptxas did not report the kernel")
        info.sass_excerpt, missing = sass.excerpt(
            ptx_path.with_suffix(".cubin"), symbol, source_path.read_text(), entry
        )
        if missing:
            info.notes.append(missing)
    return {"ok": True, "info": info.model_dump()}


def _frames(exc: BaseException):
    import traceback

    return traceback.extract_tb(exc.__traceback__)


def main(argv: list[str]) -> int:
    source_path, entry, types_json, fd = Path(argv[0]), argv[1], argv[2], int(argv[3])
    try:
        result = analyse(source_path, entry, json.loads(types_json))
    except BaseException as exc:  # never leave the simulator waiting without an answer
        result = {
            "ok": False,
            "kind": "unavailable",
            "message": f"analysis crashed: {type(exc).__name__}: {exc}"[:1000],
        }
    with os.fdopen(fd, "w") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
