"""What a learner's CUDA Python file may do at module level: imports, constants and kernel definitions, nothing else.

A learner's module is executed to find its kernels, and whatever runs at
import runs with the harness's modules loaded beside it: a module that
patches `cupy.cuda.get_elapsed_time`, `numpy`, the simulator's launch or
`time` at import would rewrite the measurement from inside. The kernel bodies
themselves are compiled by Numba's CUDA target in nopython mode (on every
backend, before anything runs), so they cannot call Python; what remains is
the module level, and this module reads it before anything executes.

Allowed at module level, checked on the syntax tree (nothing is evaluated here):
- a docstring; `import` / `from ... import` of `numba` (and its submodules),
  `math`, `cmath`, `numpy` and `__future__`;
- assignments of constants to plain names: literals, names, attributes,
  arithmetic, tuples, subscripts of Numba types (`float32[:, ::1]`), and calls
  of Numba/NumPy scalar types (`np.float32(0.5)`, `void(float32[:])`);
- function definitions whose decorators are `jit` attributes (`@cuda.jit`,
  `@cuda.jit(device=True)`, `@numba.cuda.jit("void(float32[:])")`) with such
  constant arguments, and plain `def`s (a kernel may call only what Numba
  compiles, so a plain helper is harmless until decorated).

Anything else (a call at module level, `if`, `try`, `class`, `exec`, a loop, an
import of `os`, `ctypes`, `cupy`, `gpu_worker` ...) is the learner's
compile error, naming the line.

A Triton file (`check_module(tree, "triton")`) keeps the same shape with
Triton's names: imports of `triton` (and `triton.language`), `math` and
`numpy`; constants, `tl.constexpr(...)` included; and only `@triton.jit`
functions, whose options are literal `do_not_specialize`, `debug` or `noinline`
(`launch_metadata`, `repr` and hooks are callables Triton would run). A plain
`def` is refused too: the Triton compiler calls a plain Python function it
meets in a kernel at compile time, which would run learner code beside the
compiler without the module rules' say.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

ALLOWED_MODULES = frozenset({"numba", "math", "cmath", "numpy", "__future__"})
TRITON_MODULES = frozenset({"triton", "math", "numpy", "__future__"})
# `@triton.jit(...)` options that are plain data; the others (launch_metadata, repr, ...) take callables.
TRITON_JIT_OPTIONS = frozenset({"do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline"})
# Names a constant expression may call: Numba's and NumPy's scalar types and the signature helpers.
SCALAR_TYPES = frozenset(
    {
        "void",
        "boolean",
        "bool_",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "intp",
        "uintp",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "f2",
        "f4",
        "f8",
        "i4",
        "i8",
        "u4",
        "u8",
        "dtype",
    }
)
TRITON_CALLS = frozenset({"constexpr", "dtype"})  # `BLOCK = tl.constexpr(1024)`, `tl.dtype("fp32")`
CONSTANT_NODES = (
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.BinOp,
    ast.UnaryOp,
    ast.operator,
    ast.unaryop,
    ast.Tuple,
    ast.List,
    ast.Slice,
    ast.Subscript,
    ast.Attribute,
    ast.Compare,
    ast.cmpop,
    ast.BoolOp,
    ast.boolop,
    ast.IfExp,
    ast.keyword,
    ast.Call,
)


@dataclass
class Breach:
    """Where a learner's module leaves the rules, and why, in words."""

    line: int
    column: int
    message: str


def _dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _is_dunder(name: str) -> bool:
    return any(part.startswith("__") for part in name.split("."))


def _constant_breach(node: ast.AST, calls: frozenset[str] = SCALAR_TYPES) -> ast.AST | None:
    """The first node of an expression that is not a constant expression (calling only `calls`), or None."""
    for sub in ast.walk(node):
        if not isinstance(sub, CONSTANT_NODES):
            return sub
        if isinstance(sub, ast.Attribute) and sub.attr.startswith("__"):
            return sub
        if isinstance(sub, ast.Name) and sub.id.startswith("__"):
            return sub
        if isinstance(sub, ast.Call):
            name = _dotted(sub.func)
            if name is None or name.rsplit(".", 1)[-1] not in calls:
                return sub
    return None


def _decorator_breach(node: ast.expr) -> ast.AST | None:
    target = node.func if isinstance(node, ast.Call) else node
    name = _dotted(target)
    if name is None or name.rsplit(".", 1)[-1] != "jit" or _is_dunder(name):
        return node
    if isinstance(node, ast.Call):
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            bad = _constant_breach(arg)
            if bad is not None:
                return bad
    return None


def _triton_decorator_breach(node: ast.expr) -> ast.AST | None:
    """`@triton.jit`, `@jit` or `@triton.jit(<literal data options>)`, else the offending node."""
    target = node.func if isinstance(node, ast.Call) else node
    if _dotted(target) not in ("triton.jit", "jit"):
        return node
    if isinstance(node, ast.Call):
        if node.args:
            return node.args[0]
        for keyword in node.keywords:
            if keyword.arg not in TRITON_JIT_OPTIONS:
                return keyword.value
            try:
                ast.literal_eval(keyword.value)
            except ValueError:
                return keyword.value
    return None


def _import_breach(stmt: ast.Import | ast.ImportFrom, allowed: frozenset[str] = ALLOWED_MODULES) -> str | None:
    if isinstance(stmt, ast.ImportFrom):
        if stmt.level:
            return "relative imports are not available here"
        names = [stmt.module or ""]
        if any(alias.name == "*" for alias in stmt.names) and stmt.module != "__future__":
            return f"`from {stmt.module} import *` hides what the kernel uses: import the names you need"
    else:
        names = [alias.name for alias in stmt.names]
    for name in names:
        if name.split(".")[0] not in allowed:
            words = ", ".join(sorted(allowed - {"__future__"}))
            return f"`{name}` cannot be imported in a kernel file (allowed: {words})"
    return None


def check_module(tree: ast.Module, language: str = "numba") -> Breach | None:
    """The first statement (or part of one) outside the rules above, or None when the module keeps them.

    `language` is "numba" (CUDA Python) or "triton".
    """
    triton = language == "triton"
    allowed, calls = (TRITON_MODULES, TRITON_CALLS) if triton else (ALLOWED_MODULES, SCALAR_TYPES)
    kinds = "tl.constexpr" if triton else "Numba types"
    for index, stmt in enumerate(tree.body):
        if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            why = _import_breach(stmt, allowed)
            if why:
                return Breach(stmt.lineno, stmt.col_offset + 1, why)
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [n for t in targets for n in ast.walk(t) if not isinstance(n, (ast.Name, ast.Tuple, ast.Store))]
            if names or any(isinstance(n, ast.Name) and n.id.startswith("__") for t in targets for n in ast.walk(t)):
                return Breach(stmt.lineno, stmt.col_offset + 1, "module-level assignments may only bind plain names")
            exprs = [stmt.value, getattr(stmt, "annotation", None)]
            bad = next((b for e in exprs if e is not None and (b := _constant_breach(e, calls)) is not None), None)
            if bad is not None:
                return Breach(
                    getattr(bad, "lineno", stmt.lineno),
                    getattr(bad, "col_offset", stmt.col_offset) + 1,
                    f"module-level values must be constants (numbers, tuples, {kinds}); "
                    "compute inside the kernel instead",
                )
            continue
        if isinstance(stmt, ast.FunctionDef):
            if triton and len(stmt.decorator_list) != 1:
                why = "every function in a Triton file must be decorated `@triton.jit` (and nothing else)"
                return Breach(stmt.lineno, stmt.col_offset + 1, why)
            for decorator in stmt.decorator_list:
                bad = _triton_decorator_breach(decorator) if triton else _decorator_breach(decorator)
                if bad is not None:
                    why = (
                        "a Triton kernel's decorator must be `@triton.jit`, with only literal "
                        f"{', '.join(sorted(TRITON_JIT_OPTIONS))} options"
                        if triton
                        else "a kernel's decorator must be `@cuda.jit` (optionally with constant options)"
                    )
                    return Breach(getattr(bad, "lineno", stmt.lineno), getattr(bad, "col_offset", 0) + 1, why)
            a = stmt.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
            evaluated = [*a.defaults, *filter(None, a.kw_defaults), *filter(None, (p.annotation for p in params))]
            for expr in [*evaluated, *filter(None, [stmt.returns])]:
                bad = _constant_breach(expr, calls)
                if bad is not None:
                    return Breach(expr.lineno, expr.col_offset + 1, "defaults and annotations must be constants")
            continue
        kind = type(stmt).__name__.lower()
        return Breach(
            stmt.lineno,
            stmt.col_offset + 1,
            f"a kernel file may hold only imports, constants and function definitions at module level "
            f"(found a `{kind}` statement): code that runs at import could tamper with the measurement",
        )
    return None
