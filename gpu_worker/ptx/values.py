"""PTX types as NumPy dtypes, and how values move between registers (kept as raw bits) and typed arrays.

A register holds bits: `.pred` a bool, 16/32/64-bit registers unsigned integers of that width. An
instruction reads a register as its own type (`add.f32` reads `.b32` bits as float32) and writes its
result back as bits, so Triton's untyped `.b32` floats and `mov.b32` reinterpretations need nothing
special. Reading a wider register as a narrower type keeps the low bits; writing a narrower value into
a wider register extends it, by sign for signed types (`ld.global.s8` into `.s32`).
"""

from __future__ import annotations

import numpy as np

DTYPES: dict[str, np.dtype] = {
    "pred": np.dtype(np.bool_),
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16), "f16": np.dtype(np.float16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32), "f32": np.dtype(np.float32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64), "f64": np.dtype(np.float64),
}  # fmt: skip
STORAGE: dict[int, np.dtype] = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}
UNSIGNED: dict[int, np.dtype] = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}
SIGNED: dict[int, np.dtype] = {
    1: np.dtype(np.int8),
    2: np.dtype(np.int16),
    4: np.dtype(np.int32),
    8: np.dtype(np.int64),
}


def dtype(type_: str) -> np.dtype:
    """The NumPy dtype of a PTX type name such as "f32"; KeyError for a type the executor does not run."""
    return DTYPES[type_]


def storage_of(type_: str) -> np.dtype:
    """How a register declared with `type_` is kept: bool for `.pred`, else unsigned bits of its width."""
    if type_ == "pred":
        return DTYPES["pred"]
    return STORAGE[max(2, DTYPES[type_].itemsize)]  # 8-bit registers are kept in 16 bits, as ptxas does


def is_float(type_: str) -> bool:
    return type_[0] == "f"


def is_signed(type_: str) -> bool:
    return type_[0] == "s"


def as_type(bits: np.ndarray, type_: str) -> np.ndarray:
    """A register's bits read as `type_`."""
    want = DTYPES[type_]
    have = bits.dtype
    if have == want:
        return bits
    if have.kind == "b" or want.kind == "b":
        return bits.astype(want)
    if have.itemsize == want.itemsize:
        return bits.view(want)
    narrowed = bits.astype(UNSIGNED[want.itemsize]) if have.itemsize > want.itemsize else _widen(bits, want, type_)
    return narrowed.view(want) if narrowed.dtype != want else narrowed


def _widen(bits: np.ndarray, want: np.dtype, type_: str) -> np.ndarray:
    if want.kind == "f":  # reading a narrower register as a float: its bits, zero-extended
        return bits.astype(UNSIGNED[want.itemsize])
    source = SIGNED[bits.dtype.itemsize] if is_signed(type_) else bits.dtype
    return bits.view(source).astype(want)


def to_bits(value: np.ndarray | np.generic, type_: str, storage: np.dtype) -> np.ndarray:
    """`value` (of `type_`) as the bits a register kept as `storage` holds."""
    value = np.asarray(value, dtype=DTYPES[type_])
    if storage.kind == "b":
        return value.astype(np.bool_)
    if value.dtype.kind == "b":
        return value.astype(storage)
    size = value.dtype.itemsize
    if size == storage.itemsize:
        return value.view(storage)
    unsigned = value.view(UNSIGNED[size])
    if size > storage.itemsize:
        return unsigned.astype(storage)
    if is_signed(type_):
        return value.astype(SIGNED[storage.itemsize]).view(storage)
    return unsigned.astype(storage)


def immediate(value: int | float, bits: int, type_: str) -> np.ndarray:
    """A PTX immediate as a 0-d array of `type_`: integers wrap to the width, `0f...` bits are reinterpreted."""
    want = DTYPES[type_]
    if bits:  # a float's bit pattern
        as_float = np.array(int(value), dtype=UNSIGNED[bits // 8]).view(np.float32 if bits == 32 else np.float64)
        if want.kind == "f":
            return as_float.astype(want)
        return np.array(int(value) & ((1 << (8 * want.itemsize)) - 1), dtype=UNSIGNED[want.itemsize]).view(want)
    if isinstance(value, float):
        if want.kind == "f":
            return np.array(value, dtype=want)
        return np.array(int(value), dtype=np.int64).astype(want)
    if want.kind == "f":
        return np.array(value, dtype=want)
    if want.kind == "b":
        return np.array(bool(value))
    return np.array(int(value) & ((1 << (8 * want.itemsize)) - 1), dtype=UNSIGNED[want.itemsize]).view(want)
