"""The parsed form of a PTX module: kernels, their parameters, variables, registers and instructions.

Plain frozen data made by `parser` and read by `executor`; nothing here runs anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reg:
    """A register operand, `%r5`, or a predicate, `%p1`."""

    name: str


@dataclass(frozen=True)
class Imm:
    """An immediate: an integer, or a float given as its bits (`0f3F800000`: `bits=32`) or as a decimal."""

    value: int | float
    bits: int = 0  # 32 or 64 when `value` is a float's bit pattern


@dataclass(frozen=True)
class Special:
    """A special register such as `%tid.x`, `%ctaid.y`, `%laneid`."""

    name: str


@dataclass(frozen=True)
class Sym:
    """A variable's or a label's name used as an operand (its address, or a branch target)."""

    name: str


@dataclass(frozen=True)
class Addr:
    """A memory operand `[base+offset]`; base is a register, a variable, or None for an absolute address."""

    base: Reg | Sym | None
    offset: int


@dataclass(frozen=True)
class Vec:
    """A vector operand `{%r1, %r2}` (vector loads and stores, `mov.b64` packing); `_` is a sink."""

    items: tuple[Reg | Imm, ...]


@dataclass(frozen=True)
class Pair:
    """A destination with a predicate beside it, `%r1|%p1` (`setp`, `shfl.sync`)."""

    first: Reg
    second: Reg


@dataclass(frozen=True)
class CallArgs:
    """A call's result and argument `.param` names, `call (retval0), vprintf, (param0, param1)`."""

    returns: tuple[str, ...]
    args: tuple[str, ...]


Operand = Reg | Imm | Special | Sym | Addr | Vec | Pair | CallArgs


@dataclass(frozen=True)
class Instruction:
    """One PTX instruction: opcode split at its dots, operands, an optional guard, and its source line."""

    opcode: str  # the whole opcode as written, e.g. "ld.global.nc.f32"
    base: str  # "ld"
    mods: tuple[str, ...]  # ("global", "nc", "f32")
    operands: tuple[Operand, ...]
    guard: str | None = None  # the guarding predicate's register name
    negated: bool = False  # `@!%p`
    line: int | None = None  # the source line, from the nearest `.loc` before it
    file: int | None = None  # that `.loc`'s file number (`Module.files`)


@dataclass(frozen=True)
class Variable:
    """A `.shared`, `.local`, `.global` or `.const` variable: its bytes (0 for `extern`) and alignment."""

    name: str
    space: str
    size: int
    align: int
    extern: bool = False
    init: bytes | None = None


@dataclass(frozen=True)
class Param:
    """One kernel parameter: name, PTX type (`u64`, `f32`, ...) and size in bytes."""

    name: str
    type: str
    size: int
    align: int
    pointer: bool = False


@dataclass
class Kernel:
    """One `.entry`: parameters, registers, variables declared in its body, instructions and labels."""

    name: str
    params: list[Param] = field(default_factory=list)
    registers: dict[str, str] = field(default_factory=dict)  # name -> declared type ("f32", "pred", ...)
    call_params: dict[str, str] = field(default_factory=dict)  # a call's `.param`s, declared in its scope -> type
    variables: list[Variable] = field(default_factory=list)
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label -> index of the instruction after it
    max_threads: tuple[int, ...] | None = None  # `.maxntid` or `.reqntid`
    required_threads: bool = False  # `.reqntid`: the block must be exactly max_threads


@dataclass
class Module:
    """A parsed PTX file: its kernels and its module-level variables."""

    version: str = ""
    target: str = ""
    kernels: dict[str, Kernel] = field(default_factory=dict)
    variables: list[Variable] = field(default_factory=list)
    files: dict[int, str] = field(default_factory=dict)  # `.file` number -> path
    functions: list[str] = field(default_factory=list)  # `.func` names: calls are not run
