"""Extended-precision and bit-field instructions: the carry flag (`add.cc`, `addc`, `mad.lo.cc`, `madc`, ...)
and `bfe`/`bfi`, as libdevice's `sin`/`cos` range reduction and hand-written bit tricks use them.

The carry flag is one bit per thread (`Wave.carry`); an instruction with `.cc` writes it, one whose base
ends in `c` (`addc`, `subc`, `madc`) reads it. Only 32- and 64-bit integer forms are run.
"""

from __future__ import annotations

import numpy as np

from gpu_worker.ptx.errors import Unsupported
from gpu_worker.ptx.program import Instruction
from gpu_worker.ptx.values import DTYPES

CARRY_BASES = ("add", "addc", "sub", "subc", "mad", "madc")


def _widths(ins: Instruction) -> tuple[str, int]:
    types = [m for m in ins.mods if m in DTYPES]
    if not types or types[-1][0] not in "usb" or DTYPES[types[-1]].itemsize not in (4, 8):
        raise Unsupported(f"`{ins.opcode}`: only 32- and 64-bit integers are run with the carry flag", ins.line)
    return types[-1], DTYPES[types[-1]].itemsize * 8


def _as_object(x: np.ndarray, bits: int) -> np.ndarray:
    """Values as Python ints (unsigned), so sums and products keep every bit."""
    unsigned = np.asarray(x).view(np.uint32 if bits == 32 else np.uint64)
    return unsigned.astype(object)


def carry_op(ins: Instruction):  # type: ignore[no-untyped-def]
    """(type, sources, reads carry, writes carry, fn(*sources, carry) -> (result, carry)) of one instruction."""
    t, bits = _widths(ins)
    base = ins.base
    reads, writes = base.endswith("c"), "cc" in ins.mods
    top = 1 << bits
    mask = top - 1
    if base in ("mad", "madc"):
        high = "hi" in ins.mods
        if not high and "lo" not in ins.mods:
            raise Unsupported(f"`{ins.opcode}` is not supported", ins.line)

        def mad(a: np.ndarray, b: np.ndarray, c: np.ndarray, cf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            product = _as_object(a, bits) * _as_object(b, bits)
            part = product >> bits if high else product & mask
            total = part + _as_object(c, bits) + (np.asarray(cf).astype(object) if reads else 0)
            return _back(total & mask, t, bits), np.asarray(total >= top, dtype=np.bool_)

        return t, (t, t, t), reads, writes, mad
    subtract = base.startswith("sub")

    def add(a: np.ndarray, b: np.ndarray, cf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x, y = _as_object(a, bits), _as_object(b, bits)
        extra = np.asarray(cf).astype(object) if reads else 0
        total = x - y - extra if subtract else x + y + extra
        out_of_range = total < 0 if subtract else total >= top
        return _back(total & mask, t, bits), np.asarray(out_of_range, dtype=np.bool_)

    return t, (t, t), reads, writes, add


def _back(values: np.ndarray, t: str, bits: int) -> np.ndarray:
    unsigned = np.asarray(values).astype(np.uint32 if bits == 32 else np.uint64)
    return unsigned.view(DTYPES[t])


def bit_field(ins: Instruction):  # type: ignore[no-untyped-def]
    """(type, sources, fn) of `bfe` (extract) or `bfi` (insert)."""
    types = [m for m in ins.mods if m in DTYPES]
    if not types or DTYPES[types[-1]].itemsize not in (4, 8) or types[-1][0] == "f":
        raise Unsupported(f"`{ins.opcode}` is not supported", ins.line)
    t = types[-1]
    bits = DTYPES[t].itemsize * 8

    def fields(pos: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(pos).astype(np.int64) & 0xFF, np.asarray(length).astype(np.int64) & 0xFF

    if ins.base == "bfi":

        def insert(a: np.ndarray, b: np.ndarray, pos: np.ndarray, length: np.ndarray) -> np.ndarray:
            p, n = fields(pos, length)
            n = np.minimum(n, np.maximum(bits - p, 0))
            x, y = _as_object(a, bits), _as_object(b, bits)
            field_mask = ((np.ones_like(n, dtype=object) << n.astype(object)) - 1) << np.minimum(p, bits).astype(object)
            merged = (y & ~field_mask) | ((x << np.minimum(p, bits).astype(object)) & field_mask)
            return _back(merged & ((1 << bits) - 1), t, bits)

        return t, (t, t, "u32", "u32"), insert

    def extract(a: np.ndarray, pos: np.ndarray, length: np.ndarray) -> np.ndarray:
        p, n = fields(pos, length)
        x = _as_object(a, bits)
        shifted = x >> np.minimum(p, bits).astype(object)
        kept = n.astype(object)
        value = shifted & ((np.ones_like(kept) << kept) - 1)
        if t[0] == "s":  # sign-extend from the field's top bit (or the value's, past its end)
            top_bit = np.minimum(p + n - 1, bits - 1).astype(object)
            sign = ((x >> top_bit) & 1).astype(bool) & (n > 0)
            value = np.where(sign, value | (((1 << bits) - 1) ^ ((np.ones_like(kept) << kept) - 1)), value)
        return _back(np.asarray(value, dtype=object) & ((1 << bits) - 1), t, bits)

    return t, (t, "u32", "u32"), extract
