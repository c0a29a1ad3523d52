"""The learner's compile process for Triton: a `@triton.jit` kernel to PTX and a cubin, without a GPU.

This is the only process that imports a learner's Triton module on a GPU
worker; the measuring process loads the cubin it hands back with CuPy and
launches it through Triton's kernel ABI (`gpu_worker.backends.triton_abi`).
On `sim` it runs beside Triton's interpreter, so that a kernel the real
compiler refuses is a compile error there too, with registers and spills for
sm_90.

Triton compiles ahead of time without a driver: `triton.compile(ASTSource(fn,
signature, constexprs, attrs), target=GPUTarget("cuda", 90, 32), options=...)`
(Triton 3.2 and later spell the constexprs `constexprs`; 3.0 and 3.1 `constants`,
keyed by position: both are handled, anything else is "unavailable", ours).
The signature comes from the exercise (`*fp32` for a float32 array, `i32` for an
int32 scalar, `constexpr` for each of the lab's `triton.constexprs`); every
pointer is declared 16-byte aligned (`tt.divisibility`, as Triton's own launcher
would find CuPy's allocations), no integer is specialised.

Run as `python -m gpu_worker.backends.triton_ptx --serve REQUEST_FD FD` (a
`CompileServer`): Triton imported and a kernel of ours compiled before any
learner's code exists, then one request (`{"source", "entry", "types", "cc",
"drop_uid", "triton": {"constexprs", "num_warps", "num_stages"}}`), after which
it switches to the job's uid and gets a Triton cache folder of its own. It
writes one JSON document to FD: `{"ok": true, "info", "ptx", "cubin" (base64),
"kernel": {name, num_warps, shared, scratch sizes, ...}}` or the failure shapes
of `numba_ptx`.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import inspect
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.pop("TRITON_INTERPRET", None)  # the real compiler here, whatever the simulator's process set
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, said so to silence its warning
CC = (9, 0)
# The exercise's dtypes as Triton's signature types.
TYPES = {"float32": "fp32", "float64": "fp64", "int32": "i32", "int64": "i64", "uint32": "u32"}
# Metadata the measuring process needs, copied when present (its fields vary across Triton 3.x).
METADATA = (
    "name",
    "num_warps",
    "num_stages",
    "num_ctas",
    "shared",
    "global_scratch_size",
    "global_scratch_align",
    "profile_scratch_size",
    "profile_scratch_align",
    "launch_cooperative_grid",
    "launch_pdl",
    "cluster_dims",
    "tmem_size",
    "triton_version",
    "arch",
)
_AT = re.compile(r"^at (?P<line>\d+):(?P<column>\d+):")


def version() -> str:
    import triton

    return str(triton.__version__)


def signature(arg_names: list[str], types_spec: list[list[Any]], constexprs: dict[str, int]) -> dict[str, str]:
    """Triton's signature by parameter name: the exercise's arguments in order, then the constexprs."""
    runtime = [n for n in arg_names if n not in constexprs]
    out: dict[str, str] = {}
    for name, (dtype, ndim) in zip(runtime, types_spec, strict=True):
        out[name] = ("*" if ndim else "") + TYPES[dtype]
    for name in arg_names:
        if name in constexprs:
            out[name] = "constexpr"
    return {name: out[name] for name in arg_names}


def _pointer_attrs(arg_names: list[str], sig: dict[str, str]) -> Any:
    """16-byte alignment of every pointer, in the form this Triton takes; None when it is not understood."""
    from triton.backends.compiler import BaseBackend

    pointers = [i for i, name in enumerate(arg_names) if sig[name].startswith("*")]
    parse_attr = getattr(BaseBackend, "parse_attr", None)
    if parse_attr is not None:  # Triton 3.2+: {(index,): [["tt.divisibility", 16]]}
        return {(i,): parse_attr("D") for i in pointers}
    with contextlib.suppress(Exception):  # Triton 3.0 and 3.1
        from triton.compiler.compiler import AttrsDescriptor  # type: ignore[attr-defined]

        return AttrsDescriptor(divisible_by_16=tuple(pointers), equal_to_1=())
    return None


def compile_kernel(fn: Any, types_spec: list[list[Any]], options: dict[str, Any], cc: tuple[int, int] = CC) -> Any:
    """`triton.compile` of the JITFunction `fn` for sm_<cc>, no GPU needed; Triton's CompiledKernel."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    constexprs = {str(k): int(v) for k, v in (options.get("constexprs") or {}).items()}
    names = list(fn.arg_names)
    sig = signature(names, types_spec, constexprs)
    attrs = _pointer_attrs(names, sig)
    params = inspect.signature(ASTSource.__init__).parameters
    if "constexprs" in params:
        source = ASTSource(fn, sig, constexprs=constexprs, attrs=attrs)
    elif "constants" in params:
        positional = {i: sig[n] for i, n in enumerate(names) if n not in constexprs}
        constants = {i: constexprs[n] for i, n in enumerate(names) if n in constexprs}
        source = ASTSource(fn, positional, constants=constants, attrs=attrs)
    else:
        raise RuntimeError(f"Triton {triton.__version__}'s ASTSource is not one this harness knows")
    compile_options = {"num_warps": int(options.get("num_warps", 4)), "num_stages": int(options.get("num_stages", 3))}
    return triton.compile(source, target=GPUTarget("cuda", cc[0] * 10 + cc[1], 32), options=compile_options)


def metadata(compiled: Any) -> dict[str, Any]:
    """The JSON-safe launch facts of a CompiledKernel."""
    md = compiled.metadata
    found = md._asdict() if hasattr(md, "_asdict") else dict(md) if isinstance(md, dict) else vars(md)
    out: dict[str, Any] = {}
    for key in METADATA:
        if key in found:
            value = found[key]
            out[key] = list(value) if isinstance(value, tuple) else value
    if "arch" in out:
        out["arch"] = str(out["arch"])
    return out


def triton_ptxas() -> str | None:
    """The ptxas Triton itself assembles with (its PTX is often newer than the toolkit's ptxas reads)."""
    with contextlib.suppress(Exception):
        from triton.backends.nvidia import compiler

        if hasattr(compiler, "get_ptxas"):
            return str(compiler.get_ptxas(CC[0] * 10 + CC[1]).path)
        return str(compiler._path_to_binary("ptxas")[0])  # type: ignore[attr-defined]
    return None


def _def_lines(source: str) -> dict[str, int]:
    tree = ast.parse(source)
    return {n.name: n.lineno for n in tree.body if isinstance(n, ast.FunctionDef)}


def compile_diagnostic(exc: BaseException, source: str) -> dict[str, Any]:
    """Triton's CompilationError (`at L:C:` within the function, its source, a caret, the reason) in the file."""
    text = str(exc)
    lines = text.splitlines()
    m = _AT.match(text)
    line = column = None
    if m is not None:
        src = str(getattr(exc, "src", "") or "")
        name = re.search(r"^def\s+(\w+)", src, re.MULTILINE)
        start = _def_lines(source).get(name.group(1)) if name else None
        if start is not None:
            line, column = start + int(m["line"]) - 1, int(m["column"]) + 1
    caret = next((i for i, ln in enumerate(lines) if ln.strip() == "^"), None)
    reason = "\n".join(lines[caret + 1 :] if caret is not None else lines[-1:]).strip() or type(exc).__name__
    return {"line": line, "column": column, "message": f"Triton: {reason}"[:1000]}


def _parameter_breach(fn: Any, types_spec: list[list[Any]], constexprs: dict[str, int]) -> str | None:
    names = list(fn.arg_names)
    annotated = {n for n, p in inspect.signature(fn.fn).parameters.items() if "constexpr" in str(p.annotation)}
    missing = [c for c in constexprs if c not in names]
    if missing:
        return f"this exercise compiles in {', '.join(missing)}: add `{missing[0]}: tl.constexpr` to the parameters"
    unset = sorted(annotated - set(constexprs))
    if unset:
        offered = ", ".join(constexprs) or "none"
        return f"{unset[0]} is a tl.constexpr this exercise does not set (it sets: {offered})"
    runtime = [n for n in names if n not in constexprs]
    if len(runtime) != len(types_spec):
        passed = len(types_spec)
        return f"{fn.__name__} takes {len(runtime)} arguments besides its constexprs; this exercise passes {passed}"
    return None


def analyse(
    source_path: Path, entry: str, types_spec: list[list[Any]], options: dict[str, Any], cc: tuple[int, int] = CC
) -> dict[str, Any]:
    from gpu_worker.backends import ptxas, sass
    from gpu_worker.backends.learner_module import import_learner_module
    from gpu_worker.backends.numba_ptx import _import_error
    from gpu_worker.protocol import CompileInfo

    try:
        import triton
        from triton.runtime.jit import JITFunction
    except Exception as exc:
        return {"ok": False, "kind": "unavailable", "message": f"Triton is not usable here: {exc}"[:1000]}
    source = source_path.read_text()
    try:
        module = import_learner_module(source_path, language="triton")
        kernel = getattr(module, entry)
    except BaseException as exc:
        return {"ok": False, "kind": "import", "message": str(exc)[:500], "error": _import_error(exc, source_path)}
    line = _def_lines(source).get(entry)
    if not isinstance(kernel, JITFunction):
        where = {"line": line, "message": f"{entry!r} is not a Triton kernel: decorate it with @triton.jit"}
        return {"ok": False, "kind": "compile_error", "message": where["message"], "diagnostic": where}
    constexprs = {str(k): int(v) for k, v in (options.get("constexprs") or {}).items()}
    breach = _parameter_breach(kernel, types_spec, constexprs)
    if breach:
        where = {"line": line, "message": breach}
        return {"ok": False, "kind": "compile_error", "message": breach, "diagnostic": where}
    try:
        compiled = compile_kernel(kernel, types_spec, options, cc)
    except Exception as exc:
        if type(exc).__name__ == "CompilationError" or any(f.filename == str(source_path) for f in _frames(exc)):
            diagnostic = compile_diagnostic(exc, source)
            return {"ok": False, "kind": "compile_error", "message": diagnostic["message"], "diagnostic": diagnostic}
        return {"ok": False, "kind": "unavailable", "message": f"Triton failed: {type(exc).__name__}: {exc}"[:1000]}
    asm = compiled.asm
    facts = metadata(compiled)
    ptx, cubin = str(asm.get("ptx", "")), asm.get("cubin")
    name = str(facts.get("name") or entry)
    arch = f"sm_{cc[0]}{cc[1]}"
    info = CompileInfo(tool=f"Triton {triton.__version__}", arch=arch, entry_symbol=name)
    info.ptx_excerpt = ptxas.excerpt(ptx, name)
    info.shared_bytes = int(facts.get("shared") or 0)
    info.max_threads_per_block = int(facts.get("num_warps", 4)) * 32
    info.notes.append(
        f"Triton {triton.__version__}, num_warps {facts.get('num_warps')}, num_stages {facts.get('num_stages')}: "
        f"each program is one block of {info.max_threads_per_block} threads; shared memory is dynamic"
    )
    ptx_path = source_path.with_name("triton-kernel.ptx")
    ptx_path.write_text(ptx)
    target = re.search(r"^\.target\s+(\w+)", ptx, re.MULTILINE)
    try:
        stats, _ = ptxas.assemble(ptx_path, arch=target.group(1) if target else arch, tool=triton_ptxas())
    except (OSError, RuntimeError) as exc:
        info.notes.append(f"registers and spills unknown: {exc}"[:500])
    else:
        if name in stats:
            shared = info.shared_bytes
            stats[name].fill(info)
            info.shared_bytes = shared  # Triton's shared memory is dynamic: ptxas counts the static part only
            info.arch = arch
    if isinstance(cubin, bytes):
        cubin_path = source_path.with_name("triton-kernel.cubin")
        cubin_path.write_bytes(cubin)  # Triton's own binary, the one that runs, for its SASS
        info.sass_excerpt, missing = sass.excerpt(cubin_path, name, source, entry)
        if missing:
            info.notes.append(missing)
    return {
        "ok": True,
        "info": info.model_dump(),
        "ptx": ptx,
        "cubin": base64.b64encode(cubin).decode() if isinstance(cubin, bytes) else None,
        "kernel": facts,
    }


def _frames(exc: BaseException):
    import traceback

    return traceback.extract_tb(exc.__traceback__)


WARM_SOURCE = """
import triton
import triton.language as tl
@triton.jit
def warm(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) * 2.0, mask=offs < n)
"""


def _own_cache() -> None:
    """A Triton cache (and home) of this process's own, in the job's private temp folder."""
    home = tempfile.mkdtemp(prefix="triton-")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(home, "cache")
    os.environ["TRITON_HOME"] = home
    with contextlib.suppress(Exception):
        from triton import knobs

        knobs.cache.dir = os.environ["TRITON_CACHE_DIR"]  # Triton 3.4+ reads its knobs once


def warm_compiler() -> None:
    """Triton's one-time costs (its MLIR context, the NVIDIA backend, ptxas found) paid on a kernel of ours."""
    folder = Path(tempfile.mkdtemp(prefix="triton-warm-"))
    path = folder / "warm.py"
    path.write_text(WARM_SOURCE)
    namespace: dict[str, Any] = {"__name__": "warplab_warm"}
    exec(compile(WARM_SOURCE, str(path), "exec"), namespace)
    compile_kernel(namespace["warm"], [["float32", 1], ["int32", 0]], {"constexprs": {"BLOCK": 128}})


def _serve(request_fd: int, out_fd: int) -> dict[str, Any]:
    from gpu_worker.backends.numba_ptx import read_request

    _own_cache()
    with contextlib.suppress(Exception):  # the request below meets the same fault and reports it
        warm_compiler()
    request = read_request(request_fd)
    _own_cache()  # the warm-up's cache belongs to the user the server started as
    cc = tuple(int(x) for x in request.get("cc", CC))
    options = request.get("triton") or {}
    return analyse(Path(request["source"]), request["entry"], request["types"], options, (cc[0], cc[1]))


def main(argv: list[str]) -> int:
    fd = int(argv[2])
    try:
        result = _serve(int(argv[1]), fd)
    except BaseException as exc:  # never leave the caller waiting without an answer
        message = f"analysis crashed: {type(exc).__name__}: {exc}"[:1000]
        result = {"ok": False, "kind": "unavailable", "message": message}
    with os.fdopen(fd, "w") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))  # the answer is written and closed; Numba's teardown took 0.6 s more
