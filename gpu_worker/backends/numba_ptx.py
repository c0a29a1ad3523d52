"""The learner's compile process: a Numba kernel to PTX, assembled with `ptxas -v`, without a GPU.

This is the only process that imports a learner's CUDA Python module, on
either backend. On `sim` it runs beside the simulator (which replaces
`numba.cuda` for its whole process, so the real compiler needs one of its
own); on `cuda` the measuring process never imports learner code at all: it
loads the PTX this process hands back (`"ptx"`, `"symbol"`) as a binary and
launches it through Numba's kernel ABI (`gpu_worker.backends.numba_abi`).

Two ways to run it, inside the sandbox:
- `python -m gpu_worker.backends.numba_ptx SOURCE ENTRY TYPES FD`: compile now;
- `python -m gpu_worker.backends.numba_ptx --serve REQUEST_FD FD`: a warm
  compiler (`CompileServer`): Numba imported and its first compilation done
  before any learner's code exists, then one request (`{"source", "entry",
  "types", "cc", "drop_uid", "listing"}`) read from REQUEST_FD; when started as root it
  switches to the job's uid before it reads the learner's file.
Either writes one JSON document to fd FD:
`{"ok": true, "info": CompileInfo, "ptx", "symbol", "max_registers"}` or
`{"ok": false, "kind": "compile_error" | "import" | "unavailable", "message", "diagnostic"}`;
"unavailable" only when numba-cuda itself cannot run here (or this module failed), never for a kernel
that Numba could not compile: that is the learner's compile error, and nothing of theirs runs after it.

Numba's typing errors are the learner's compile errors (the simulator would
run code a GPU cannot compile). A toolkit without NVRTC (only nvcc and libnvvm,
as on CPU workers) is fine: NVRTC is only asked which architectures it knows,
and we name the architecture ourselves.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy

if not hasattr(numpy, "row_stack"):  # numba 0.68 still calls numpy.row_stack, gone in NumPy 2.5
    numpy.row_stack = numpy.vstack  # type: ignore[attr-defined]

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


@dataclass(frozen=True)
class NamedDevice:
    """The device a compile without a GPU is for: only its compute capability is ever read."""

    compute_capability: tuple[int, int]


def _compile_device_functions_for(cc: tuple[int, int]) -> None:
    """Make numba-cuda compile `@cuda.jit(device=True)` functions for `cc` instead of asking the driver.

    `compile_ptx` takes the architecture as an argument, but a device function that a kernel calls is
    compiled by its dispatcher's `compile_device`, which reads `get_current_device().compute_capability`:
    without a GPU that raises (no driver), and with one it may name another architecture than the
    kernel's. This process only compiles, for the architecture we name, so the dispatcher is told that one.
    """
    from numba.cuda import dispatcher

    if not hasattr(dispatcher, "get_current_device"):  # a numba-cuda that moved it: say so, loudly
        raise RuntimeError("numba-cuda's dispatcher has no get_current_device to name the architecture with")
    device = NamedDevice(cc)
    dispatcher.get_current_device = lambda: device


def signature(types_spec: list[list[Any]]) -> tuple:
    """Numba types from `[[dtype, ndim], ...]`: C-contiguous arrays for ndim > 0, scalars for 0."""
    from numba import types

    out = []
    for dtype, ndim in types_spec:
        scalar = getattr(types, dtype)
        out.append(types.Array(scalar, int(ndim), "C") if ndim else scalar)
    return tuple(out)


def analyse(
    source_path: Path, entry: str, types_spec: list[list[Any]], cc: tuple[int, int] = CC, *, listing: bool = True
) -> dict[str, Any]:
    """Import, compile and assemble the learner's kernel; `listing=False` leaves the SASS to the caller.

    Without the listing the answer comes 0.3 s or more sooner (nvdisasm); the cubin stays beside the PTX
    (`numba-kernel.cubin`) for the caller to disassemble once the compile report is out.
    """
    from gpu_worker.backends import ptxas, sass
    from gpu_worker.exercise.diagnostics import from_exception, from_numba_error
    from gpu_worker.protocol import CompileInfo

    try:
        import numba_cuda
        from numba import cuda
        from numba.core.errors import NumbaError

        _allow_missing_nvrtc()
        _compile_device_functions_for(cc)
    except Exception as exc:
        return {"ok": False, "kind": "unavailable", "message": f"numba-cuda is not usable here: {exc}"}
    from gpu_worker.backends.learner_module import import_learner_module

    try:
        module = import_learner_module(source_path)
        kernel = getattr(module, entry)
        py_func = getattr(kernel, "py_func", kernel)
    except BaseException as exc:  # the caller sorts the learner's import errors (see `import_failure`)
        return {"ok": False, "kind": "import", "message": str(exc)[:500], "error": _import_error(exc, source_path)}
    options = dict(getattr(kernel, "targetoptions", {}) or {})
    source = source_path.read_text()
    arch = f"sm_{cc[0]}{cc[1]}"
    try:
        ptx, _ = cuda.compile_ptx(
            py_func, signature(types_spec), cc=cc, lineinfo=True, fastmath=bool(options.get("fastmath", False))
        )
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
        # Numba failed inside itself on this kernel: maybe our fault, maybe the kernel's, and the kernel
        # does not run either way; the learner is told plainly (the simulator must not run untyped code)
        message = f"the Numba compiler failed on this kernel (not in a line of yours): {type(exc).__name__}: {exc}"
        return {
            "ok": False,
            "kind": "compile_error",
            "message": message[:1000],
            "diagnostic": {"message": message[:1000]},
        }
    info = CompileInfo(tool=f"numba-cuda {numba_cuda.__version__} (NVVM) + ptxas {ptxas.version()}", arch=arch)
    kernels = [name for name in ptxas.entries(ptx) if entry in name]
    symbol = kernels[0] if kernels else entry
    info.ptx_excerpt = ptxas.excerpt(ptx, symbol).replace(symbol, entry)  # the mangled name is unreadable
    ptx_path = source_path.with_name("numba-kernel.ptx")
    ptx_path.write_text(ptx)
    max_registers = options.get("max_registers")
    assembled = ptx_with_max_registers(ptx, symbol, max_registers) if max_registers else ptx
    ptx_path.write_text(assembled)
    try:
        stats, _ = ptxas.assemble(ptx_path, arch=arch)
    except (OSError, RuntimeError) as exc:
        unlinked = unlinked_call(str(exc))
        if unlinked is not None:  # no GPU could load it either: the harness loads the PTX alone (module doc)
            return {"ok": False, "kind": "compile_error", "message": unlinked, "diagnostic": {"message": unlinked}}
        info.entry_symbol = symbol
        info.notes.append(f"registers and spills unknown: {exc}"[:500])
    else:
        if symbol in stats:
            stats[symbol].fill(info)
        else:
            info.notes.append("ptxas did not report the kernel")
        if listing:
            info.sass_excerpt, missing = sass.excerpt(ptx_path.with_suffix(".cubin"), symbol, source, entry)
            if missing:
                info.notes.append(missing)
    return {
        "ok": True,
        "info": info.model_dump(),
        "ptx": assembled,
        "symbol": symbol,
        "max_registers": int(max_registers) if max_registers else None,
    }


def unlinked_call(ptxas_error: str) -> str | None:
    """The learner's sentence when ptxas found a call into a library numba-cuda links and the harness does not.

    numba-cuda lowers float16 arithmetic (`*`, `+` on two float16 values) to calls into its fp16 shim (C++
    `__half` operators), linked at load time by Numba's own linker; the measuring process loads the PTX alone
    with CuPy, so the GPU refuses it. Conversions (`float32(h)`, `float16(f)`) are plain `cvt` and need nothing.
    """
    match = re.search(r"Unresolved extern function '([^']+)'", ptxas_error)
    if match is None:
        return None
    name = match.group(1)
    if "__half" in name or "6__half" in name:
        return (
            "float16 arithmetic (a * b or a + b on two float16 values) calls numba-cuda's fp16 library, which "
            "this harness does not link: convert each float16 to float32 (float32(h)) and compute in float32"
        )
    return f"your kernel calls an external function that this harness does not link ({name[:80]})"


def ptx_with_max_registers(ptx: str, symbol: str, max_registers: int) -> str:
    """The PTX with `.maxnreg` on the kernel's entry: Numba applies `max_registers` at link time, we at load."""
    head, sep, tail = ptx.partition(f".entry {symbol}(")
    if not sep:
        return ptx
    params, close, body = tail.partition(")")
    return f"{head}{sep}{params}{close}\n.maxnreg {int(max_registers)}{body}"


def _import_error(exc: BaseException, source_path: Path) -> dict[str, Any]:
    """How the learner's import failed, as data the other side turns back into a verdict."""
    from gpu_worker.backends.learner_module import ModuleRuleError
    from gpu_worker.exercise.diagnostics import from_exception, from_syntax_error

    if isinstance(exc, SyntaxError):
        return {"verdict": "compile_error", "diagnostic": from_syntax_error(exc).model_dump()}
    if isinstance(exc, ModuleRuleError):
        where = {"line": exc.line, "column": exc.column, "message": exc.message}
        return {"verdict": "compile_error", "diagnostic": where}
    diagnostic = from_exception(exc, str(source_path))
    if isinstance(exc, AttributeError):
        return {"verdict": "rejected", "diagnostic": diagnostic.model_dump()}
    fault = isinstance(exc, (MemoryError, OSError, SystemExit, RecursionError))
    verdict = "runtime_error" if fault else "compile_error"
    return {"verdict": verdict, "diagnostic": diagnostic.model_dump()}


def _drop_privileges(uid: int | None) -> None:
    if uid is None or os.getuid() != 0:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid:
        raise RuntimeError("could not switch to the job's user")


WARM_SOURCE = """
from numba import cuda
@cuda.jit
def warm(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] *= 2.0
"""


def warm_compiler() -> None:
    """Numba's one-time costs (typing and target contexts, NVVM) paid on a kernel of our own."""
    from numba import cuda

    _allow_missing_nvrtc()
    namespace: dict[str, Any] = {}
    exec(compile(WARM_SOURCE, "<warplab-warm-up>", "exec"), namespace)
    cuda.compile_ptx(namespace["warm"].py_func, signature([["float32", 1], ["int32", 0]]), cc=CC)


def read_request(request_fd: int) -> dict[str, Any]:
    """A server's one request, read whole; then this process is the job's user, with the engine's rules choice."""
    with os.fdopen(request_fd, "rb") as pipe:
        raw = pipe.read(1 << 20)
    request = json.loads(raw)
    _drop_privileges(request.get("drop_uid"))
    if request.get("unchecked") is True:  # the engine turned the module rules off (the sandbox's own tests)
        from gpu_worker.backends.learner_module import UNCHECKED_ENV

        os.environ[UNCHECKED_ENV] = "1"
    return request


def _serve(request_fd: int, out_fd: int) -> dict[str, Any]:
    """Warm the compiler, then compile the one request that comes."""
    with contextlib.suppress(Exception):  # the request below meets the same fault and reports it
        warm_compiler()
    request = read_request(request_fd)
    cc = tuple(int(x) for x in request.get("cc", CC))
    listing = request.get("listing", True) is not False
    return analyse(Path(request["source"]), request["entry"], request["types"], (cc[0], cc[1]), listing=listing)


def _frames(exc: BaseException):
    import traceback

    return traceback.extract_tb(exc.__traceback__)


def main(argv: list[str]) -> int:
    serving = argv[0] == "--serve"
    fd = int(argv[2] if serving else argv[3])
    try:
        result = _serve(int(argv[1]), fd) if serving else analyse(Path(argv[0]), argv[1], json.loads(argv[2]))
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
    os._exit(main(sys.argv[1:]))  # the answer is written and closed; Numba's teardown took 0.6 s more
