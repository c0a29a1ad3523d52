"""Extended-precision and bit-field instructions: the carry flag (`add.cc`, `addc`, `mad.lo.cc`, `madc`, ...),
`bfe`/`bfi`, as libdevice's `sin`/`cos` range reduction and hand-written bit tricks use them, and the
word instructions `brev`, `clz`, `bfind` and `prmt` (`__brev`, `__clz`, `__ffs`' neighbours, `__byte_perm`).

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


WORD_BASES = ("brev", "clz", "bfind", "prmt")
_REVERSED_BYTES = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)
# prmt's modes other than the generic one: byte i of the result is byte `pick(selector, i)` of {b, a}.
_PRMT_MODES = {
    "f4e": lambda s, i: (s + i) & 7,  # forward 4 extract
    "b4e": lambda s, i: (s - i) & 7,  # backward 4 extract
    "rc8": lambda s, i: s,  # replicate one byte
    "ecl": lambda s, i: np.maximum(s, i),  # edge clamp left
    "ecr": lambda s, i: np.minimum(s, i),  # edge clamp right
    "rc16": lambda s, i: (s & 1) * 2 + (i & 1),  # replicate one half-word
}


def _bit_length(x: np.ndarray, bits: int) -> np.ndarray:
    """Per element, the number of bits up to its highest set bit (0 for 0), by smearing that bit down."""
    word = np.uint32 if bits == 32 else np.uint64
    smeared = np.asarray(x).view(word).copy()
    shift = 1
    while shift < bits:
        smeared = np.bitwise_or(smeared, np.right_shift(smeared, word(shift)))
        shift *= 2
    return np.bitwise_count(smeared).astype(np.int64)


def _brev(x: np.ndarray, bits: int) -> np.ndarray:
    unsigned = np.ascontiguousarray(x).view(np.uint32 if bits == 32 else np.uint64)
    per_byte = _REVERSED_BYTES[unsigned.view(np.uint8).reshape(-1, bits // 8)][:, ::-1]  # little-endian words
    return np.ascontiguousarray(per_byte).view(unsigned.dtype).reshape(unsigned.shape)


def word_op(ins: Instruction):  # type: ignore[no-untyped-def]
    """(dest type, source types, fn) of `brev`, `clz`, `bfind` or `prmt`; Unsupported for another form."""
    types = [m for m in ins.mods if m in DTYPES]
    t = types[-1] if types else ""
    bits = DTYPES[t].itemsize * 8 if t else 0
    base = ins.base
    if bits not in (32, 64) or t[0] not in "bus" or (base == "prmt" and t != "b32"):
        raise Unsupported(f"`{ins.opcode}` is not supported", ins.line)
    if base == "brev":
        return t, (t,), lambda a: _brev(a, bits).view(DTYPES[t])
    if base == "clz":
        return "u32", (t,), lambda a: (bits - _bit_length(a, bits)).astype(np.uint32)
    if base == "bfind":
        return "u32", (t,), _bfind(t, bits, "shiftamt" in ins.mods)
    modes = [m for m in ins.mods if m in _PRMT_MODES]
    return "b32", ("b32", "b32", "b32"), _prmt(_PRMT_MODES[modes[0]] if modes else None)


def _bfind(t: str, bits: int, shift_amount: bool):  # type: ignore[no-untyped-def]
    """The position of the highest bit that differs from the sign (set, for unsigned); all ones if none."""

    def bfind(a: np.ndarray) -> np.ndarray:
        x = np.asarray(a)
        if t[0] == "s":
            x = np.where(x < 0, ~x, x)  # a negative value's highest 0 bit is its complement's highest 1
        position = _bit_length(x, bits) - 1
        if shift_amount:
            position = np.where(position < 0, position, bits - 1 - position)
        return np.where(position < 0, 0xFFFFFFFF, position).astype(np.uint32)

    return bfind


def _prmt(pick):  # type: ignore[no-untyped-def]
    """`prmt.b32` d, a, b, c: each byte of d chosen from the eight bytes of {b, a} by c (or the mode and c[1:0])."""

    def permute(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        pool = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
        selectors = np.asarray(c).astype(np.int64)
        result = np.zeros(np.broadcast(pool, selectors).shape, dtype=np.uint64)
        for i in range(4):
            if pick is None:  # the generic form: c's nibble i, its top bit replicating the byte's sign
                nibble = (selectors >> (4 * i)) & 0xF
                index, sign = nibble & 7, (nibble & 8) != 0
            else:
                index, sign = pick(selectors & 3, i), False
            byte = (pool >> (8 * np.asarray(index)).astype(np.uint64)) & np.uint64(0xFF)
            byte = np.where(sign, np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)), byte)
            result |= byte.astype(np.uint64) << np.uint64(8 * i)
        return result.astype(np.uint32)

    return permute
