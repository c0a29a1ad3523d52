"""What the register-to-register instructions compute, on NumPy arrays over a group of threads.

`decode` turns one instruction into an `Op`: the types its sources are read as, the type of its
result, and a function of the source arrays. Float arithmetic is IEEE in NumPy's types, rounded to
nearest; `fma` is computed in a wider type and rounded once (exact for f32 products; for f64 the
product is rounded first, a documented difference of at most one ulp). Directed rounding is run only
where the census found it (`fma.rm/rp`, `cvt.rmi/rpi/rzi`); any other rounding or modifier the
executor does not model is refused by `Unsupported`. Integer division by zero yields all ones (the
quotient) or the dividend (the remainder) instead of trapping, as the hardware yields some value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpu_worker.ptx import bits
from gpu_worker.ptx.errors import Unsupported
from gpu_worker.ptx.program import Instruction
from gpu_worker.ptx.values import DTYPES, SIGNED, UNSIGNED

Fn = Callable[..., np.ndarray]
TYPES = frozenset(DTYPES)
_FLOAT_ROUNDING = {"rn", "rz", "rm", "rp"}
_INT_ROUNDING = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
_APPROX = {"approx", "full", "ftz", "rn"}


@dataclass(frozen=True)
class Op:
    """A decoded instruction: read `sources` as these types, compute, write `result` as `dest`."""

    dest: str
    sources: tuple[str, ...]
    fn: Fn
    second_dest: bool = False  # setp's `p|q`: the function returns (p, q)


def _type(ins: Instruction) -> str:
    types = [m for m in ins.mods if m in TYPES]
    if not types:
        raise Unsupported(f"`{ins.opcode}` has no type the executor knows", ins.line)
    return types[-1]


def _refuse(ins: Instruction, allowed: set[str]) -> None:
    extra = [m for m in ins.mods if m not in allowed and m not in TYPES]
    if extra:
        raise Unsupported(f"`{ins.opcode}`: the modifier .{extra[0]} is not supported", ins.line)


def _bits(type_: str) -> int:
    return DTYPES[type_].itemsize * 8


def _ftz(x: np.ndarray) -> np.ndarray:
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.zeros_like(x), x)


def _sat(x: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), 0, np.clip(x, 0, 1)).astype(x.dtype)


def _float_wrap(ins: Instruction, fn: Fn) -> Fn:
    """Apply `.ftz` to inputs and result, and `.sat` to the result, around a float function."""
    ftz, sat = "ftz" in ins.mods, "sat" in ins.mods
    if not ftz and not sat:
        return fn

    def wrapped(*xs: np.ndarray) -> np.ndarray:
        xs = tuple(_ftz(np.asarray(x)) if ftz and np.asarray(x).dtype.kind == "f" else x for x in xs)
        out = np.asarray(fn(*xs))
        out = _ftz(out) if ftz else out
        return _sat(out) if sat else out

    return wrapped


def _directed(exact: np.ndarray, narrow: np.dtype, mode: str) -> np.ndarray:
    """`exact` (a wider float) rounded to `narrow` toward -inf (`rm`), +inf (`rp`) or zero (`rz`)."""
    near = exact.astype(narrow)
    wide = near.astype(exact.dtype)
    if mode == "rm":
        return np.where(wide > exact, np.nextafter(near, narrow.type(-np.inf)), near)
    if mode == "rp":
        return np.where(wide < exact, np.nextafter(near, narrow.type(np.inf)), near)
    toward = np.where(exact > 0, wide > exact, wide < exact)
    return np.where(toward, np.nextafter(near, narrow.type(0)), near)


def _fma(ins: Instruction, t: str) -> Fn:
    mode = next((m for m in ins.mods if m in _FLOAT_ROUNDING), "rn")
    if t == "f64":
        if mode != "rn":
            raise Unsupported(f"`{ins.opcode}`: directed rounding of f64 is not supported", ins.line)
        return lambda a, b, c: a * b + c
    wide = np.float64 if t in ("f32", "f16") else np.longdouble
    narrow = DTYPES[t]

    def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        exact = np.asarray(a, dtype=wide) * np.asarray(b, dtype=wide) + np.asarray(c, dtype=wide)
        return exact.astype(narrow) if mode == "rn" else _directed(exact, narrow, mode)

    return fma


def _wide_mul(a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    """a * b in twice the width of `t` (a 32-bit type: 64 bits)."""
    wide = SIGNED[8] if t[0] == "s" else UNSIGNED[8]
    return np.asarray(a).astype(wide) * np.asarray(b).astype(wide)


def _mul_hi64(a: np.ndarray, b: np.ndarray, signed: bool) -> np.ndarray:
    """The high 64 bits of a 64 x 64-bit product, from 32-bit halves."""
    au, bu = np.asarray(a).view(np.uint64) if signed else a, np.asarray(b).view(np.uint64) if signed else b
    mask = np.uint64(0xFFFFFFFF)
    a_lo, a_hi, b_lo, b_hi = au & mask, au >> np.uint64(32), bu & mask, bu >> np.uint64(32)
    lo_lo, hi_lo, lo_hi, hi_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi, a_hi * b_hi
    cross = (lo_lo >> np.uint64(32)) + (hi_lo & mask) + lo_hi
    high = hi_hi + (hi_lo >> np.uint64(32)) + (cross >> np.uint64(32))
    if signed:  # correct the unsigned product for negative operands
        high = (
            high
            - np.where(np.asarray(a) < 0, bu, 0).astype(np.uint64)
            - np.where(np.asarray(b) < 0, au, 0).astype(np.uint64)
        )
        return high.view(np.int64)
    return high


def _mul(ins: Instruction, t: str) -> Op:
    if t[0] == "f":
        _refuse(ins, {"rn", "ftz", "sat"})
        return Op(t, (t, t), _float_wrap(ins, lambda a, b: a * b))
    if "wide" in ins.mods:
        wide = ("s" if t[0] == "s" else "u") + str(2 * _bits(t))
        return Op(wide, (t, t), lambda a, b: _wide_mul(a, b, t))
    if "hi" in ins.mods:
        if _bits(t) == 64:
            return Op(t, (t, t), lambda a, b: _mul_hi64(a, b, t[0] == "s"))
        shift = _bits(t)
        return Op(t, (t, t), lambda a, b: (_wide_mul(a, b, t) >> shift).astype(DTYPES[t]))
    return Op(t, (t, t), lambda a, b: a * b)


def _mad(ins: Instruction, t: str) -> Op:
    if t[0] == "f":
        _refuse(ins, {"rn", "rz", "rm", "rp", "ftz", "sat"})
        return Op(t, (t, t, t), _float_wrap(ins, _fma(ins, t)))
    if "wide" in ins.mods:
        wide = ("s" if t[0] == "s" else "u") + str(2 * _bits(t))
        return Op(wide, (t, t, wide), lambda a, b, c: _wide_mul(a, b, t) + c)
    if "hi" in ins.mods:
        mul = _mul(ins, t).fn
        return Op(t, (t, t, t), lambda a, b, c: mul(a, b) + c)
    return Op(t, (t, t, t), lambda a, b, c: a * b + c)


def _div(ins: Instruction, t: str) -> Op:
    if t[0] == "f":
        _refuse(ins, _APPROX)
        return Op(t, (t, t), _float_wrap(ins, lambda a, b: a / b))
    return Op(t, (t, t), lambda a, b: _int_div(a, b, t)[0])


def _int_div(a: np.ndarray, b: np.ndarray, t: str) -> tuple[np.ndarray, np.ndarray]:
    """C's truncating quotient and remainder; a zero divisor gives all ones and the dividend."""
    a, b = np.asarray(a), np.asarray(b)
    zero = b == 0
    safe = np.where(zero, 1, b).astype(a.dtype)
    if t[0] == "s":
        q = np.abs(a) // np.abs(safe)
        q = np.where((a < 0) != (safe < 0), -q, q).astype(a.dtype)
    else:
        q = a // safe
    r = (a - q * safe).astype(a.dtype)
    ones = np.array(-1).astype(SIGNED[a.dtype.itemsize]).astype(a.dtype)
    return np.where(zero, ones, q).astype(a.dtype), np.where(zero, a, r).astype(a.dtype)


def _shift(ins: Instruction, t: str) -> Op:
    bits = _bits(t)
    left = ins.base == "shl"

    def shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.asarray(a), np.asarray(b).astype(np.uint32)
        over = b >= bits
        amount = np.minimum(b, bits - 1).astype(a.dtype)
        if left:
            return np.where(over, 0, a << amount).astype(a.dtype)
        shifted = a >> amount
        if t[0] == "s":
            return shifted  # an arithmetic shift by bits - 1 already fills with the sign
        return np.where(over, 0, shifted).astype(a.dtype)

    return Op(t, (t, "u32"), shift)


_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}  # fmt: skip
_BOOL: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "and": np.logical_and,
    "or": np.logical_or,
    "xor": np.logical_xor,
}


def _setp(ins: Instruction, t: str) -> Op:
    ops = [m for m in ins.mods if m not in TYPES and m != "ftz"]
    if not ops:
        raise Unsupported(f"`{ins.opcode}` has no comparison", ins.line)
    cmp, combine = ops[0], ops[1] if len(ops) > 1 else None
    if combine is not None and combine not in _BOOL:
        raise Unsupported(f"`{ins.opcode}`: .{combine} is not supported", ins.line)
    unordered = cmp.endswith("u") and cmp not in ("lu",) and t[0] == "f" and cmp[:-1] in _COMPARE
    if cmp in ("num", "nan"):
        base: Callable[[np.ndarray, np.ndarray], np.ndarray] = (
            (lambda a, b: ~(np.isnan(a) | np.isnan(b))) if cmp == "num" else (lambda a, b: np.isnan(a) | np.isnan(b))
        )
    elif unordered:
        ordered = _COMPARE[cmp[:-1]]

        def base(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return ordered(a, b) | np.isnan(a) | np.isnan(b)
    elif cmp in _COMPARE:
        base = _COMPARE[cmp]
    else:
        raise Unsupported(f"`{ins.opcode}`: the comparison .{cmp} is not supported", ins.line)
    if combine is None:
        return Op("pred", (t, t), lambda a, b: _pair(base(a, b), ~base(a, b)), second_dest=True)
    join = _BOOL[combine]

    def combined(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        found = base(a, b)
        return _pair(join(found, c), join(~found, c))

    return Op("pred", (t, t, "pred"), combined, second_dest=True)


def _pair(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """setp's two results stacked: p, and q (the comparison negated, joined with c the same way)."""
    return np.stack(np.broadcast_arrays(p, q))


def _cvt(ins: Instruction) -> Op:
    types = [m for m in ins.mods if m in TYPES]
    if len(types) != 2:
        raise Unsupported(f"`{ins.opcode}` needs a destination and a source type", ins.line)
    dest, src = types
    mods = [m for m in ins.mods if m not in TYPES]
    _refuse(ins, {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "ftz", "sat"})
    rounding = next((m for m in mods if m in _FLOAT_ROUNDING or m in _INT_ROUNDING), None)
    ftz, sat = "ftz" in mods, "sat" in mods
    to, frm = DTYPES[dest], DTYPES[src]

    def convert(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        if ftz and a.dtype.kind == "f":
            a = _ftz(a)
        if to.kind == "f":
            if frm.kind == "f" and rounding in _INT_ROUNDING:
                out = _INT_ROUNDING[rounding](a).astype(to)
            elif rounding in ("rz", "rm", "rp") and to.itemsize < max(frm.itemsize, 4 if frm.kind != "f" else 0):
                out = _directed(a.astype(np.float64), to, rounding)
            else:
                out = a.astype(to)
            out = _ftz(out) if ftz else out
            return _sat(out) if sat else out
        if frm.kind == "f":
            rounded = _INT_ROUNDING.get(rounding or "rzi", np.trunc)(a.astype(np.float64))
            info = np.iinfo(to)
            clipped = np.clip(np.where(np.isnan(rounded), 0, rounded), float(info.min), float(info.max))
            big = clipped >= 2.0 ** (to.itemsize * 8 - (1 if to.kind == "i" else 0))  # above the top: saturate
            return np.where(big, info.max, clipped.astype(to)).astype(to)
        if sat:
            info = np.iinfo(to)
            return np.clip(
                a.astype(np.float64) if a.dtype.itemsize == 8 else a.astype(np.int64), info.min, info.max
            ).astype(to)
        return a.astype(to)

    return Op(dest, (src,), convert)


def _math(ins: Instruction, t: str) -> Op:
    base = ins.base
    functions: dict[str, Fn] = {
        "sqrt": np.sqrt,
        "rsqrt": lambda a: 1 / np.sqrt(a),
        "rcp": lambda a: 1 / a,
        "ex2": np.exp2,
        "lg2": np.log2,
        "sin": np.sin,
        "cos": np.cos,
        "tanh": np.tanh,
    }
    _refuse(ins, _APPROX)
    if base in ("ex2", "lg2", "sin", "cos", "tanh", "rsqrt") and "approx" not in ins.mods:
        raise Unsupported(f"`{ins.opcode}`: only the .approx form is run", ins.line)
    fn = functions[base]
    return Op(t, (t,), _float_wrap(ins, lambda a: fn(a).astype(DTYPES[t])))


def _unary_or_binary(ins: Instruction, t: str) -> Op:
    base = ins.base
    if base == "neg":
        return Op(t, (t,), _float_wrap(ins, lambda a: -a) if t[0] == "f" else (lambda a: (-a).astype(DTYPES[t])))
    if base == "abs":
        return Op(t, (t,), _float_wrap(ins, np.abs) if t[0] == "f" else (lambda a: np.abs(a).astype(DTYPES[t])))
    if base == "not":
        return Op(t, (t,), np.logical_not if t == "pred" else np.invert)
    if base == "cnot":
        return Op(t, (t,), lambda a: (a == 0).astype(DTYPES[t]))
    if base in ("min", "max"):
        pick = (np.fmin if base == "min" else np.fmax) if t[0] == "f" else (np.minimum if base == "min" else np.maximum)
        return Op(t, (t, t), _float_wrap(ins, pick) if t[0] == "f" else pick)
    if base in ("and", "or", "xor"):
        if t == "pred":
            return Op(t, (t, t), _BOOL[base])
        return Op(t, (t, t), {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[base])
    if base == "copysign":  # copysign.type d, a, b: b's magnitude with a's sign
        return Op(t, (t, t), lambda a, b: np.copysign(b, a))
    if base == "popc":
        return Op("u32", (t,), lambda a: np.asarray(np.bitwise_count(a)).astype(np.uint32))
    if base in ("add", "sub"):
        if t[0] == "f":
            _refuse(ins, {"rn", "ftz", "sat"})
            return Op(t, (t, t), _float_wrap(ins, np.add if base == "add" else np.subtract))
        if "sat" in ins.mods or "cc" in ins.mods:
            raise Unsupported(f"`{ins.opcode}` is not supported", ins.line)
        return Op(t, (t, t), np.add if base == "add" else np.subtract)
    raise Unsupported(f"`{ins.opcode}` is not supported", ins.line)


def decode(ins: Instruction) -> Op:
    """The `Op` of a register-to-register instruction; Unsupported for a form the executor does not run."""
    base = ins.base
    if "cc" in ins.mods:  # the carry flag (extended-precision arithmetic) is not modelled
        raise Unsupported(f"`{ins.opcode}` (the carry flag) is not supported", ins.line)
    if base == "cvt":
        return _cvt(ins)
    if base in bits.WORD_BASES:
        dest, sources, fn = bits.word_op(ins)
        return Op(dest, sources, fn)
    t = _type(ins)
    if base == "mul":
        return _mul(ins, t)
    if base == "mad":
        return _mad(ins, t)
    if base == "fma":
        _refuse(ins, {"rn", "rz", "rm", "rp", "ftz", "sat"})
        return Op(t, (t, t, t), _float_wrap(ins, _fma(ins, t)))
    if base in ("div", "rem"):
        if base == "rem":
            return Op(t, (t, t), lambda a, b: _int_div(a, b, t)[1])
        return _div(ins, t)
    if base in ("shl", "shr"):
        return _shift(ins, t)
    if base == "setp":
        return _setp(ins, t)
    if base == "selp":
        return Op(t, (t, t, "pred"), lambda a, b, c: np.asarray(np.where(c, a, b)).astype(DTYPES[t]))
    if base in ("sqrt", "rsqrt", "rcp", "ex2", "lg2", "sin", "cos", "tanh"):
        if t[0] != "f":
            raise Unsupported(f"`{ins.opcode}` is not supported", ins.line)
        return _math(ins, t)
    return _unary_or_binary(ins, t)
