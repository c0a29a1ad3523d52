"""Read PTX text into a `program.Module`: kernels, parameters, registers, variables, labels, `.loc` lines.

The text is the learner's (their compiler's output, or anything they could make it print), so it is
read as hostile data: its size and counts are bounded, every regular expression is linear, and what
is not understood is an error naming it, never skipped silently when it could change a result.
DWARF `.section`s and directives that only guide a compiler (`.pragma`, `.maxnreg`) are skipped.
"""

from __future__ import annotations

import re

from gpu_worker.ptx import refused
from gpu_worker.ptx.errors import PtxSyntaxError, Unsupported
from gpu_worker.ptx.program import (
    Addr,
    CallArgs,
    Imm,
    Instruction,
    Kernel,
    Module,
    Operand,
    Pair,
    Param,
    Reg,
    Special,
    Sym,
    Variable,
    Vec,
)

MAX_TEXT = 8 << 20  # characters of PTX read at most
MAX_INSTRUCTIONS = 200_000  # per kernel
MAX_REGISTERS = 1 << 16  # per kernel, all kinds together
MAX_VARIABLE_BYTES = 1 << 26

TYPE_BYTES = {
    "pred": 1, "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8,
}  # fmt: skip
SPECIALS = frozenset(f"%{name}.{axis}" for name in ("tid", "ntid", "ctaid", "nctaid") for axis in "xyz") | {
    "%laneid",
    "%warpid",
    "%nwarpid",
    "%lanemask_eq",
    "%lanemask_lt",
    "%lanemask_le",
    "%lanemask_gt",
    "%lanemask_ge",
}
_SKIPPED_DIRECTIVES = ("pragma", "maxnreg", "noreturn", "explicitcluster", "maxclusterrank", "reqnctapercluster")

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_FUNCTION = re.compile(
    r"((?:\.(?:visible|extern|weak)\s+)*)\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)\s*(?:\(([^)]*)\))?"
)
_LABEL = re.compile(r"([A-Za-z_$][\w$.]*)\s*:(?!:)")
_GUARD = re.compile(r"@(!?)(%[\w$.]+)\s+")
_OPCODE = re.compile(r"[a-z][\w.:]*")
_REG_DECL = re.compile(r"\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.+)")
_RANGE = re.compile(r"(%?[\w$]+)<(\d+)>")
_VAR_DECL = re.compile(
    r"((?:\.(?:visible|extern|weak|common)\s+)*)\.(shared|local|global|const)\s+"
    r"(?:\.align\s+(\d+)\s+)?(?:\.v(\d)\s+)?\.(\w+)\s+([A-Za-z_$][\w$]*)((?:\s*\[\s*\d*\s*\])*)\s*(?:=\s*(.*))?$",
    re.S,
)
_PARAM_DECL = re.compile(
    r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(\.ptr\s+(?:\.\w+\s+)*)?(?:\.align\s+(\d+)\s+)?([A-Za-z_$][\w$]*)"
    r"(?:\s*\[\s*(\d+)\s*\])?$"
)
_INT = re.compile(r"(-?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?")
_FLOAT_BITS = re.compile(r"0([fFdD])([0-9a-fA-F]+)")
_DECIMAL = re.compile(r"-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+")


def parse(text: str) -> Module:
    """The module that `text` declares; PtxSyntaxError or Unsupported when it cannot be read."""
    if len(text) > MAX_TEXT:
        raise PtxSyntaxError(f"the PTX is {len(text)} characters; at most {MAX_TEXT} are read")
    text = _COMMENTS.sub(" ", _inline_asm_at_its_call(text))
    module = Module()
    pos, end = 0, len(text)
    while pos < end:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            break
        function = _FUNCTION.match(text, pos)
        if function is not None:
            pos = _function(text, function, module)
            continue
        if text.startswith(".section", pos):
            pos = _block_end(text, text.index("{", pos) if "{" in text[pos:] else end)
            continue
        line_end = text.find("\n", pos)
        line_end = end if line_end < 0 else line_end
        line = text[pos:line_end].strip()
        if line.startswith((".version", ".target", ".address_size", ".file")):
            _module_directive(line, module)
            pos = line_end
            continue
        stop = text.find(";", pos)
        if stop < 0:
            raise PtxSyntaxError(f"unterminated statement: {text[pos : pos + 60]!r}")
        _module_statement(" ".join(text[pos:stop].split()), module)
        pos = stop + 1
    return module


def _module_directive(line: str, module: Module) -> None:
    words = line.split(None, 2)
    if words[0] == ".version" and len(words) > 1:
        module.version = words[1]
    elif words[0] == ".target" and len(words) > 1:
        module.target = line.split(None, 1)[1]
    elif words[0] == ".file" and len(words) > 2:
        match = re.match(r'"([^"]*)"', words[2])
        if words[1].isdigit() and match:
            module.files[int(words[1])] = match[1]


def _module_statement(statement: str, module: Module) -> None:
    variable = _variable(statement)
    if variable is None:
        raise Unsupported(f"module-level statement {statement[:60]!r} is not supported")
    module.variables.append(variable)


def _block_end(text: str, open_at: int) -> int:
    """The index just past the brace that closes the one at `open_at`."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise PtxSyntaxError("a '{' is never closed")


def _function(text: str, match: re.Match[str], module: Module) -> int:
    kind, name, params = match[2], match[3], match[4] or ""
    pos = match.end()
    directives_end = min(i for i in (text.find("{", pos), text.find(";", pos), len(text)) if i >= 0)
    directives = text[pos:directives_end]
    if directives_end == len(text) or text[directives_end] == ";":  # a declaration, no body
        if kind == "func":
            module.functions.append(name)
        return directives_end + 1
    body_end = _block_end(text, directives_end)
    if kind == "func":
        module.functions.append(name)
        return body_end
    kernel = Kernel(name)
    kernel.params = [_param(" ".join(p.split())) for p in params.split(",") if p.strip()]
    _launch_directives(directives, kernel)
    _body(text[directives_end + 1 : body_end - 1], kernel, module)
    module.kernels[name] = kernel
    return body_end


def _launch_directives(text: str, kernel: Kernel) -> None:
    for directive, values in re.findall(r"\.(maxntid|reqntid)\s+([\d\s,]+)", text):
        kernel.max_threads = tuple(int(v) for v in values.replace(",", " ").split())
        kernel.required_threads = directive == "reqntid"


def _param(text: str) -> Param:
    match = _PARAM_DECL.match(text)
    if match is None or match[2] not in TYPE_BYTES:
        raise Unsupported(f"kernel parameter {text[:80]!r} is not supported")
    size = TYPE_BYTES[match[2]] * (int(match[6]) if match[6] else 1)
    align = int(match[1] or match[4] or TYPE_BYTES[match[2]])
    return Param(match[5], match[2], size, align, pointer=bool(match[3]))


def _variable(statement: str) -> Variable | None:
    match = _VAR_DECL.match(statement)
    if match is None:
        return None
    qualifiers, space, align, vector, type_, name, dims, init = match.groups()
    if type_ not in TYPE_BYTES:
        raise Unsupported(f"variable {name} of type .{type_} is not supported")
    count = int(vector or 1)
    extern = "extern" in qualifiers
    for dim in re.findall(r"\[\s*(\d*)\s*\]", dims):
        if not dim:
            extern = True
            count = 0
        else:
            count *= int(dim)
    size = count * TYPE_BYTES[type_]
    if size > MAX_VARIABLE_BYTES:
        raise Unsupported(f"variable {name} is {size} bytes; at most {MAX_VARIABLE_BYTES} are run")
    data = _initialiser(init, type_, size, name) if init else None
    return Variable(name, space, size, int(align or TYPE_BYTES[type_]), extern, data)


def _initialiser(text: str, type_: str, size: int, name: str) -> bytes:
    width = TYPE_BYTES[type_]
    values = [v.strip() for v in text.strip().strip("{}").split(",") if v.strip()]
    data = bytearray(size)
    for i, value in enumerate(values[: size // width]):
        operand = _operand(value)
        if not isinstance(operand, Imm) or isinstance(operand.value, float):
            raise Unsupported(f"the initialiser of {name} is not supported")
        data[i * width : (i + 1) * width] = (int(operand.value) & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    return bytes(data)


def _inline_asm_at_its_call(text: str) -> str:
    """`text` with every `.loc` inside an inline-asm block dropped but the block's first, the call's own line.

    LLVM's NVPTX printer gives each line of an inline-asm block a `.loc` one line further than the last:
    Triton 3.9's unmasked `tl.load` of four words (four `mov`s and an `ld.global.v4`) called on line 8 has
    its load on "line 12", past the end of a ten-line file.
    """
    if "// begin inline asm" not in text:
        return text
    out: list[str] = []
    inside = located = False
    for row in text.split("\n"):
        stripped = row.strip()
        if stripped.startswith("// begin inline asm"):
            inside, located = True, False
        elif stripped.startswith("// end inline asm"):
            inside = False
        elif inside and re.match(r"\.loc\s", stripped):  # not `.local`
            if located:
                continue
            located = True
        out.append(row)
    return "\n".join(out)


def _body(text: str, kernel: Kernel, module: Module) -> None:
    line: int | None = None
    file: int | None = None
    pending = ""
    for raw in text.split("\n"):
        stripped = raw.strip()
        if not pending and re.match(r"\.loc\s", stripped):  # not `.local`
            words = stripped.split()
            if len(words) >= 3 and words[1].isdigit() and words[2].isdigit():
                file, line = int(words[1]), int(words[2]) or line
            continue
        pending = f"{pending} {stripped}" if pending else stripped
        while pending:
            pending = pending.lstrip("{} \t")
            label = _LABEL.match(pending)
            if label is not None:
                kernel.labels[label[1]] = len(kernel.instructions)
                pending = pending[label.end() :]
                continue
            stop = pending.find(";")
            if stop < 0:
                break
            statement, pending = pending[:stop].strip(), pending[stop + 1 :]
            if statement:
                _statement(statement, kernel, module, line, file)
    if pending.strip(" {}"):
        raise PtxSyntaxError(f"unterminated statement: {pending[:60]!r}")


def _statement(statement: str, kernel: Kernel, module: Module, line: int | None, file: int | None) -> None:
    if statement.startswith("."):
        _declaration(statement, kernel, line)
        return
    guard = _GUARD.match(statement)
    rest = statement[guard.end() :] if guard else statement
    opcode = _OPCODE.match(rest)
    if opcode is None:
        raise PtxSyntaxError(f"cannot read the instruction {statement[:60]!r}", line)
    parts = opcode[0].split(".")
    if parts[0] == "call":  # the executor runs vprintf and refuses other calls by name
        operands: tuple[Operand, ...] = _call(rest[opcode.end() :], line)
    elif refused.what_is_refused(opcode[0]):  # kept unread: the executor refuses it by name if its kernel runs
        operands = ()
    else:
        operands = tuple(_operand(o, line) for o in _split_operands(rest[opcode.end() :]))
    if len(kernel.instructions) >= MAX_INSTRUCTIONS:
        raise Unsupported(f"the kernel has more than {MAX_INSTRUCTIONS} instructions")
    kernel.instructions.append(
        Instruction(
            opcode[0],
            parts[0],
            tuple(parts[1:]),
            operands,
            guard[2] if guard else None,
            bool(guard and guard[1]),
            line,
            file,
        )
    )


def _call(text: str, line: int | None) -> tuple[Operand, ...]:
    """`(retval0), vprintf, (param0, param1)` as (Sym(callee), CallArgs(returns, args))."""
    text = text.strip()
    returns: list[str] = []
    if text.startswith("("):
        close = text.find(")")
        returns = [r.strip() for r in text[1:close].split(",") if r.strip()]
        text = text[close + 1 :].lstrip(" ,")
    callee = re.match(r"[A-Za-z_$][\w$]*", text)
    if callee is None:
        raise PtxSyntaxError(f"cannot read the call {text[:60]!r}", line)
    args = re.search(r"\(([^)]*)\)", text[callee.end() :])
    names = [a.strip() for a in args[1].split(",") if a.strip()] if args else []
    return Sym(callee[0]), CallArgs(tuple(returns), tuple(names))


def _declaration(statement: str, kernel: Kernel, line: int | None) -> None:
    regs = _REG_DECL.match(statement)
    if regs is not None:
        type_ = regs[1]
        for item in regs[2].split(","):
            item = item.strip()
            ranged = _RANGE.fullmatch(item)
            names = [f"{ranged[1]}{i}" for i in range(int(ranged[2]))] if ranged else [item]
            if len(kernel.registers) + len(names) > MAX_REGISTERS:
                raise Unsupported(f"the kernel declares more than {MAX_REGISTERS} registers", line)
            for name in names:
                kernel.registers[name] = type_
        return
    variable = _variable(statement)
    if variable is not None:
        kernel.variables.append(variable)
        return
    if statement.startswith(".param"):  # a call's argument or result, declared in its scope
        declared = _PARAM_DECL.match(statement)
        if declared is None:
            raise Unsupported(f"the call parameter {statement[:60]!r} is not supported", line)
        scalar = not declared[6] and declared[2] in TYPE_BYTES and TYPE_BYTES[declared[2]] <= 8
        kernel.call_params[declared[5]] = declared[2] if scalar else "array"  # only vprintf's are ever used
        return
    if statement.split()[0].lstrip(".") in _SKIPPED_DIRECTIVES:
        return
    raise Unsupported(f"the directive {statement.split()[0]} is not supported", line)


def _split_operands(text: str) -> list[str]:
    """Operands at top-level commas (not those inside `{...}` or `[...]`)."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _operand(text: str, line: int | None = None) -> Operand:
    text = text.strip()
    if text.startswith("["):
        return _address(text[1:-1].replace(" ", "").replace("\t", ""), line)
    if text.startswith("{"):
        items = [_operand(item, line) for item in _split_operands(text[1:-1])]
        if not all(isinstance(item, Reg | Imm) for item in items):
            raise PtxSyntaxError(f"cannot read the vector {text[:60]!r}", line)
        return Vec(tuple(items))  # type: ignore[arg-type]
    if "|" in text:
        first, second = text.split("|", 1)
        return Pair(Reg(first.strip()), Reg(second.strip()))
    if text.startswith("%"):
        return Special(text) if text in SPECIALS else Reg(text)
    if text == "_":
        return Reg("_")
    if text == "WARP_SZ":
        return Imm(32)
    bits = _FLOAT_BITS.fullmatch(text)
    if bits is not None:
        return Imm(int(bits[2], 16), 32 if bits[1] in "fF" else 64)
    number = _INT.fullmatch(text)
    if number is not None:
        digits = number[2]
        base = (
            16
            if digits[:2] in ("0x", "0X")
            else 2
            if digits[:2] in ("0b", "0B")
            else 8
            if len(digits) > 1 and digits[0] == "0"
            else 10
        )
        value = int(digits[2:] if base in (2, 16) else digits, base)
        return Imm(-value if number[1] else value)
    if _DECIMAL.fullmatch(text):
        return Imm(float(text))
    if re.fullmatch(r"[A-Za-z_$][\w$]*", text):
        return Sym(text)
    raise PtxSyntaxError(f"cannot read the operand {text[:60]!r}", line)


def _address(text: str, line: int | None) -> Addr:
    match = re.fullmatch(r"([%A-Za-z_$][\w$.]*)?(?:\+?(-?(?:0[xX][0-9a-fA-F]+|\d+)))?", text)
    if match is None or not text:
        raise PtxSyntaxError(f"cannot read the address [{text[:60]}]", line)
    base_text, offset_text = match[1], match[2]
    offset = int(offset_text, 0) if offset_text else 0
    if base_text is None:
        return Addr(None, offset)
    return Addr(Reg(base_text) if base_text.startswith("%") else Sym(base_text), offset)


def learner_lines(kernel: Kernel, module: Module) -> list[int | None]:
    """Each instruction's line in the learner's file; a `.loc` in another file (an inlined header) keeps the last."""
    learner = {n for n, path in module.files.items() if path.rsplit("/", 1)[-1].startswith("submission")}
    if not learner and module.files:
        learner = {min(module.files)}
    lines: list[int | None] = []
    last: int | None = None
    for ins in kernel.instructions:
        if ins.line is not None and (not learner or ins.file in learner):
            last = ins.line
        lines.append(last)
    return lines
