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
- function definitions decorated `@cuda.jit` (Numba's, as imported), bare or
  with a signature built from Numba types (`@cuda.jit(void(float32[:]))`) and
  literal options (`device=True`, `fastmath=False`, `max_registers=32`, ...),
  and plain `def`s (a kernel may call only what Numba compiles, so a plain
  helper is harmless until decorated).

Numba evaluates some decorator arguments as Python: a string signature is
`eval()`ed by `sigutils` in the compile process, `link` names files to read,
`cache` loads pickles, `extensions` and a callable `inline` are called. So a
signature is Numba types only (never a string), options are an allowlist of
literals, and every call, decorator included, is resolved through the module's
own imports: `from numpy import load as float32` or `def dtype(): ...` cannot
pass for a type, and a function named `__getattr__` (which Python would call
for a missing attribute of the module) is refused.

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
from collections.abc import Callable
from dataclasses import dataclass, field

ALLOWED_MODULES = frozenset({"numba", "math", "cmath", "numpy", "__future__"})
TRITON_MODULES = frozenset({"triton", "math", "numpy", "__future__"})
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
# Where a callable name must come from (resolved through the module's imports) to be called at import.
NUMBA_CALL_MODULES = frozenset({"numba", "numba.types", "numba.core.types", "numba.cuda", "numpy"})
TRITON_CALL_MODULES = frozenset({"triton", "triton.language"})
NUMBA_JIT = "numba.cuda.jit"
TRITON_JIT = "triton.jit"


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


def _is_register_count(value: object) -> bool:
    return type(value) is int and 1 <= value <= 255


def _is_launch_bounds(value: object) -> bool:
    """An int, or a tuple of one to three ints (max threads, min blocks, max blocks per cluster)."""
    values = value if isinstance(value, tuple) else (value,)
    return 1 <= len(values) <= 3 and all(type(v) is int and v > 0 for v in values)


def _is_parameter_list(value: object) -> bool:
    """Triton's `do_not_specialize`: parameter names or positions."""
    return isinstance(value, (list, tuple)) and all(type(v) in (str, int) for v in value)


# `@cuda.jit(...)` options that are plain data, with the literal values each takes. The others are refused:
# `link` names files for Numba to read, `cache` loads pickles, `extensions` are objects Numba calls, and
# `inline` may be a cost-model function.
CUDA_JIT_OPTIONS: dict[str, Callable[[object], bool]] = {
    "device": _is_bool,
    "fastmath": _is_bool,
    "lineinfo": _is_bool,
    "opt": _is_bool,
    "debug": _is_bool,
    "forceinline": _is_bool,
    "inline": lambda value: _is_bool(value) or value in ("always", "never"),
    "max_registers": _is_register_count,
    "launch_bounds": _is_launch_bounds,
}
# `@triton.jit(...)` options that are plain data; the others (launch_metadata, repr, ...) take callables.
TRITON_JIT_OPTIONS: dict[str, Callable[[object], bool]] = {
    "do_not_specialize": _is_parameter_list,
    "do_not_specialize_on_alignment": _is_parameter_list,
    "debug": _is_bool,
    "noinline": _is_bool,
}
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
# What a signature (`void(float32[:, ::1], int32)`) is made of; integers only for the slices' steps.
SIGNATURE_NODES = (ast.Call, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Name, ast.Attribute, ast.Load)
STRING_SIGNATURE = (
    "a string signature in a kernel's decorator is run as Python by Numba (it eval()s the text): "
    "write the types themselves, e.g. `@cuda.jit(void(float32[:]))` after `from numba import void, float32`, "
    "or leave the signature out (`@cuda.jit`)"
)
NOT_A_SIGNATURE = "a kernel's decorator takes only a signature made of Numba types, e.g. `void(float32[:], int32)`"
NUMBA_DECORATOR = "a kernel's decorator must be `@cuda.jit` (optionally with a signature of Numba types and options)"


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


@dataclass
class _Scope:
    """What each module-level name is bound to so far, statement by statement (module code has no branches).

    A name bound by an import resolves to the full name it was imported as (`np` -> `numpy`); a name the
    learner's own code binds (an assignment, a `def`) resolves to nothing, so it can never pass for a type
    or for `cuda.jit`.
    """

    imported: dict[str, str] = field(default_factory=dict)
    signatures: set[str] = field(default_factory=set)  # names bound to a signature made of Numba types

    def bind_import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        for alias in stmt.names:
            if isinstance(stmt, ast.ImportFrom):
                self.bind(alias.asname or alias.name, f"{stmt.module}.{alias.name}")
            elif alias.asname:
                self.bind(alias.asname, alias.name)
            else:  # `import numba.cuda` binds `numba`
                self.bind(alias.name.split(".")[0], alias.name.split(".")[0])

    def bind(self, name: str, imported: str | None = None, *, signature: bool = False) -> None:
        self.imported.pop(name, None)
        self.signatures.discard(name)
        if imported is not None:
            self.imported[name] = imported
        if signature:
            self.signatures.add(name)

    def resolve(self, node: ast.AST) -> str | None:
        """The full imported name that `node` (a name or attribute chain) refers to, or None."""
        dotted = _dotted(node)
        if dotted is None or _is_dunder(dotted):
            return None
        root, _, rest = dotted.partition(".")
        full = self.imported.get(root)
        if full is None:
            return None
        return f"{full}.{rest}" if rest else full


def _callable(full: str | None, calls: frozenset[str], modules: frozenset[str]) -> bool:
    """Whether a resolved name is one of `calls` from one of `modules` (`numba.float32`, `numpy.float32`)."""
    if full is None:
        return False
    module, _, name = full.rpartition(".")
    return module in modules and name in calls


def _constant_breach(
    node: ast.AST, scope: _Scope, calls: frozenset[str] = SCALAR_TYPES, modules: frozenset[str] = NUMBA_CALL_MODULES
) -> ast.AST | None:
    """The first node of an expression that is not a constant expression (calling only `calls`), or None."""
    for sub in ast.walk(node):
        if not isinstance(sub, CONSTANT_NODES):
            return sub
        if isinstance(sub, ast.Attribute) and sub.attr.startswith("__"):
            return sub
        if isinstance(sub, ast.Name) and sub.id.startswith("__"):
            return sub
        if isinstance(sub, ast.Call) and not _callable(scope.resolve(sub.func), calls, modules):
            return sub
    return None


def _signature_breach(node: ast.AST, scope: _Scope) -> tuple[ast.AST, str] | None:
    """Where a `@cuda.jit` signature is not made of Numba types (a string above all: Numba eval()s it), or None."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, (str, bytes)):
            return sub, STRING_SIGNATURE
        if isinstance(sub, ast.Constant) and (sub.value is None or type(sub.value) is int):
            continue
        if not isinstance(sub, SIGNATURE_NODES):
            return sub, NOT_A_SIGNATURE
        if isinstance(sub, ast.Name) and sub.id not in scope.signatures:
            full = scope.resolve(sub)
            if full is None or full.split(".")[0] != "numba":
                return sub, NOT_A_SIGNATURE
        if isinstance(sub, ast.Attribute) and sub.attr.startswith("__"):
            return sub, NOT_A_SIGNATURE
        if isinstance(sub, ast.Call) and not _callable(scope.resolve(sub.func), SCALAR_TYPES, NUMBA_CALL_MODULES):
            return sub, NOT_A_SIGNATURE
    return None


def _is_signature(node: ast.expr, scope: _Scope) -> bool:
    """Whether an assigned value is a signature a decorator may take (`SIG = void(float32[:])`)."""
    return isinstance(node, (ast.Call, ast.Tuple, ast.List, ast.Name)) and _signature_breach(node, scope) is None


_NOT_LITERAL = object()


def _options_breach(
    keywords: list[ast.keyword], allowed: dict[str, Callable[[object], bool]]
) -> tuple[ast.AST, str] | None:
    """The first decorator option that is not in `allowed` with a literal value it accepts, and why, or None."""
    for keyword in keywords:
        if keyword.arg is None or keyword.arg not in allowed:
            name = f"`{keyword.arg}`" if keyword.arg else "`**options`"
            return keyword.value, f"{name} is not an option a kernel's decorator may take here " + (
                f"(allowed: {', '.join(sorted(allowed))})"
            )
        try:
            value = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = _NOT_LITERAL  # refused below: no check accepts it
        if not allowed[keyword.arg](value):
            return keyword.value, f"a kernel's decorator takes `{keyword.arg}` only as a literal value it accepts"
    return None


def _decorator_breach(node: ast.expr, scope: _Scope) -> tuple[ast.AST, str] | None:
    """`@cuda.jit` (Numba's, as imported), bare or with one signature of Numba types and literal options."""
    target = node.func if isinstance(node, ast.Call) else node
    if scope.resolve(target) != NUMBA_JIT:
        return node, NUMBA_DECORATOR
    if not isinstance(node, ast.Call):
        return None
    if len(node.args) > 1:
        return node.args[1], NUMBA_DECORATOR
    if node.args:
        found = _signature_breach(node.args[0], scope)
        if found is not None:
            return found
    return _options_breach(node.keywords, CUDA_JIT_OPTIONS)


def _triton_decorator_breach(node: ast.expr, scope: _Scope) -> tuple[ast.AST, str] | None:
    """`@triton.jit` (as imported), bare or with literal data options, else the offending node and why."""
    why = (
        f"a Triton kernel's decorator must be `@triton.jit`, with only literal {', '.join(TRITON_JIT_OPTIONS)} options"
    )
    target = node.func if isinstance(node, ast.Call) else node
    if scope.resolve(target) != TRITON_JIT:
        return node, why
    if not isinstance(node, ast.Call):
        return None
    if node.args:
        return node.args[0], why
    found = _options_breach(node.keywords, TRITON_JIT_OPTIONS)
    return None if found is None else (found[0], why)


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


def _assignment_breach(stmt: ast.Assign | ast.AnnAssign, scope: _Scope, triton: bool) -> Breach | None:
    """A module-level assignment binds plain names to constant expressions; the names are bound in `scope`."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    nodes = [n for t in targets for n in ast.walk(t)]
    if any(not isinstance(n, (ast.Name, ast.Tuple, ast.Store)) for n in nodes) or any(
        isinstance(n, ast.Name) and n.id.startswith("__") for n in nodes
    ):
        return Breach(stmt.lineno, stmt.col_offset + 1, "module-level assignments may only bind plain names")
    calls, modules = (TRITON_CALLS, TRITON_CALL_MODULES) if triton else (SCALAR_TYPES, NUMBA_CALL_MODULES)
    exprs = [stmt.value, getattr(stmt, "annotation", None)]
    bad = next((b for e in exprs if e is not None and (b := _constant_breach(e, scope, calls, modules))), None)
    if bad is not None:
        kinds = "tl.constexpr" if triton else "Numba types"
        return Breach(
            getattr(bad, "lineno", stmt.lineno),
            getattr(bad, "col_offset", stmt.col_offset) + 1,
            f"module-level values must be constants (numbers, tuples, {kinds}); compute inside the kernel instead",
        )
    signature = not triton and stmt.value is not None and _is_signature(stmt.value, scope)
    for name in (n.id for n in nodes if isinstance(n, ast.Name)):
        scope.bind(name, signature=signature)
    return None


def _function_breach(stmt: ast.FunctionDef, scope: _Scope, triton: bool) -> Breach | None:
    """A `def`: its name, decorators, defaults and annotations (what runs when the `def` runs)."""
    if stmt.name.startswith("__"):
        why = f"a function may not be named `{stmt.name}`: Python itself calls such module-level functions"
        return Breach(stmt.lineno, stmt.col_offset + 1, why)
    if triton and len(stmt.decorator_list) != 1:
        why = "every function in a Triton file must be decorated `@triton.jit` (and nothing else)"
        return Breach(stmt.lineno, stmt.col_offset + 1, why)
    for decorator in stmt.decorator_list:
        found = _triton_decorator_breach(decorator, scope) if triton else _decorator_breach(decorator, scope)
        if found is not None:
            bad, why = found
            return Breach(getattr(bad, "lineno", stmt.lineno), getattr(bad, "col_offset", 0) + 1, why)
    calls, modules = (TRITON_CALLS, TRITON_CALL_MODULES) if triton else (SCALAR_TYPES, NUMBA_CALL_MODULES)
    a = stmt.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
    evaluated = [*a.defaults, *filter(None, a.kw_defaults), *filter(None, (p.annotation for p in params))]
    for expr in [*evaluated, *filter(None, [stmt.returns])]:
        if _constant_breach(expr, scope, calls, modules) is not None:
            return Breach(expr.lineno, expr.col_offset + 1, "defaults and annotations must be constants")
    scope.bind(stmt.name)
    return None


def check_module(tree: ast.Module, language: str = "numba") -> Breach | None:
    """The first statement (or part of one) outside the rules above, or None when the module keeps them.

    `language` is "numba" (CUDA Python) or "triton".
    """
    triton = language == "triton"
    allowed = TRITON_MODULES if triton else ALLOWED_MODULES
    scope = _Scope()
    for index, stmt in enumerate(tree.body):
        if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        found: Breach | None
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            why = _import_breach(stmt, allowed)
            found = Breach(stmt.lineno, stmt.col_offset + 1, why) if why else None
            scope.bind_import(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            found = _assignment_breach(stmt, scope, triton)
        elif isinstance(stmt, ast.FunctionDef):
            found = _function_breach(stmt, scope, triton)
        else:
            kind = type(stmt).__name__.lower()
            found = Breach(
                stmt.lineno,
                stmt.col_offset + 1,
                f"a kernel file may hold only imports, constants and function definitions at module level "
                f"(found a `{kind}` statement): code that runs at import could tamper with the measurement",
            )
        if found is not None:
            return found
    return None
