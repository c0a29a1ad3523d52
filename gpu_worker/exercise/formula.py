"""Safe evaluation of the small formulas that lab folders write in `lab.yaml`.

Sizes, launch shapes, bytes and FLOPs are arithmetic over named sizes
(`12 * n`, `ceil_div(n, 256)`); expected outputs are NumPy expressions over the
input arrays (`a + b`, `np.sqrt(x)`). Lab content is authored by instructors,
but a typo must fail with a clear message, not execute arbitrary Python, so we
walk the AST and allow only arithmetic, comparisons, calls of whitelisted
functions and attribute access on `np`.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np


class FormulaError(ValueError):
    """A formula that does not parse or uses something it may not."""


def ceil_div(a: int, b: int) -> int:
    """Integer division rounding up, the usual grid-size helper."""
    return -(-int(a) // int(b))


SIZE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ceil_div": ceil_div,
    "min": min,
    "max": max,
    "abs": abs,
    "log2": math.log2,
    "int": int,
}

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.MatMult: operator.matmul,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def _parse(text: str) -> ast.expr:
    try:
        return ast.parse(str(text).strip(), mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(f"cannot parse formula {text!r}: {exc.msg}") from None


def _evaluate(node: ast.AST, names: Mapping[str, Any], allow_numpy: bool, xp: Any = np) -> Any:
    def ev(n: ast.AST) -> Any:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return n.value
        if isinstance(n, ast.Name):
            if n.id in names:
                return names[n.id]
            raise FormulaError(f"unknown name {n.id!r} (known: {', '.join(sorted(names))})")
        if isinstance(n, ast.BinOp) and type(n.op) in _BINARY:
            return _BINARY[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and type(n.op) in _UNARY:
            return _UNARY[type(n.op)](ev(n.operand))
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in _COMPARE:
            return _COMPARE[type(n.ops[0])](ev(n.left), ev(n.comparators[0]))
        if isinstance(n, ast.Subscript):
            return ev(n.value)[ev(n.slice)]
        if isinstance(n, ast.Slice):
            return slice(*(ev(p) if p is not None else None for p in (n.lower, n.upper, n.step)))
        if isinstance(n, ast.Tuple):
            return tuple(ev(e) for e in n.elts)
        if isinstance(n, ast.Attribute) and allow_numpy:
            if isinstance(n.value, ast.Name) and n.value.id == "np" and not n.attr.startswith("_"):
                return getattr(xp, n.attr)
            if n.attr in {"T", "shape", "size", "dtype"}:
                return getattr(ev(n.value), n.attr)
            raise FormulaError(f"attribute {n.attr!r} is not allowed")
        if isinstance(n, ast.Call) and not n.keywords:
            func: Callable[..., Any] = ev(n.func)  # a name from SIZE_FUNCTIONS or, with NumPy, an `np.` attribute
            numpy_call = allow_numpy and isinstance(n.func, ast.Attribute)
            if numpy_call or any(func is f for f in SIZE_FUNCTIONS.values()):
                return func(*(ev(a) for a in n.args))
            raise FormulaError("only whitelisted functions may be called")
        raise FormulaError(f"{type(n).__name__} is not allowed in a formula")

    return ev(node)


def check_formula(text: str, known: set[str], allow_numpy: bool = False) -> None:
    """Raise FormulaError if `text` does not parse or names something outside `known`."""
    tree = _parse(text)
    allowed = known | set(SIZE_FUNCTIONS) | ({"np"} if allow_numpy else set())
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in allowed:
            raise FormulaError(f"unknown name {node.id!r} in {text!r}")


def size_value(text: str | int, sizes: Mapping[str, int]) -> int:
    """Evaluate an integer formula of the sizes, e.g. `ceil_div(n, 256)`."""
    if isinstance(text, int):
        return text
    value = _evaluate(_parse(text), {**SIZE_FUNCTIONS, **sizes}, allow_numpy=False)
    if isinstance(value, float) and not value.is_integer():
        raise FormulaError(f"{text!r} is not a whole number for {dict(sizes)}")
    return int(value)


def number_value(text: str | float, sizes: Mapping[str, int]) -> float:
    """Evaluate a real formula of the sizes (bytes moved, FLOPs)."""
    if isinstance(text, (int, float)):
        return float(text)
    return float(_evaluate(_parse(text), {**SIZE_FUNCTIONS, **sizes}, allow_numpy=False))


def array_value(text: str, arrays: Mapping[str, Any], xp: Any = np) -> Any:
    """Evaluate a NumPy expression over the named inputs (the expected output).

    With `xp=cupy` and CuPy arrays the same expression runs on the GPU (`np.` names CuPy's functions).
    """
    names = {**SIZE_FUNCTIONS, **arrays, "np": xp}
    return xp.asarray(_evaluate(_parse(text), names, allow_numpy=True, xp=xp))
