"""Run one kernel launch of a parsed PTX kernel on the CPU, its threads vectorised with NumPy.

Blocks run in waves: a wave is as many whole blocks as fit `Limits.wave_threads`, and every register is
an array over the wave's threads. Each thread has its own program counter; a step picks the lowest
counter among the threads that can run and executes that instruction for every thread standing on
it, so threads that diverged run their paths one after the other and meet again where the paths
join (the min-PC scheme, which reconverges at the immediate post-dominator of structured code).
`bar.sync` parks a block's threads until all its threads still running have arrived. Guards
(`@%p`) mask threads out of an instruction; warp-level instructions (`shfl.sync`, `vote.sync`) see
the lanes of each warp that stand on the same instruction.

The PTX is hostile data: instructions executed (per thread) and memory are bounded by `Limits`,
every load and store is checked (`memory`), and `ld/st/atom` in an unknown space, `call`, and every
form `alu` does not know are refused before the launch starts, naming the instruction and its line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from gpu_worker.ptx import alu, bits, collective, refused
from gpu_worker.ptx.collective import count as _count
from gpu_worker.ptx.collective import select as _select
from gpu_worker.ptx.errors import KernelFault, LimitExceeded, Unsupported
from gpu_worker.ptx.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_BYTES, Buffer, Fault, GlobalMemory
from gpu_worker.ptx.parser import learner_lines
from gpu_worker.ptx.printf import Printed, format_printf
from gpu_worker.ptx.program import (
    Addr,
    CallArgs,
    Imm,
    Instruction,
    Kernel,
    Module,
    Operand,
    Pair,
    Reg,
    Special,
    Sym,
    Vec,
)
from gpu_worker.ptx.report import Hazards, MemoryTrace
from gpu_worker.ptx.values import DTYPES, as_type, immediate, storage_of, to_bits
from gpu_worker.ptx.wave import Wave, make_wave, three
from gpu_worker.science.memtrace_report import Space

ALL = slice(None)
Index = Any  # slice(None) (every thread of the wave) or an array of thread positions
_CACHE_HINTS = {"nc", "ca", "cg", "cs", "lu", "cv", "volatile", "relaxed", "acquire", "release", "weak"}
_SCOPES = {"cta", "gpu", "sys", "cluster"}
_SPACES = {"global", "shared", "local", "param", "const"}
_NO_OPS = {"membar", "fence", "prefetch", "prefetchu", "pmevent", "nanosleep"}


@dataclass(frozen=True)
class Limits:
    """How much one launch may cost: thread-instructions, threads per wave, register and local bytes."""

    max_thread_instructions: int = 200_000_000
    wave_threads: int = 16_384
    max_register_bytes: int = 256 << 20
    max_local_bytes_per_thread: int = 16 << 10
    max_shared_bytes: int = 228 << 10


@dataclass(frozen=True)
class Launch:
    """The launch configuration: grid and block in three dimensions, dynamic shared memory in bytes."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int = 0


@dataclass
class Stats:
    """What a launch executed: thread-instructions (guarded-off ones included) and warp-level steps."""

    thread_instructions: int = 0
    steps: int = 0
    threads: int = 0


Step = Callable[[Wave, Index, int], None]


class Executor:
    """One kernel of a module, decoded for one launch's parameters and buffers; `run` executes it."""

    def __init__(
        self,
        module: Module,
        kernel: Kernel,
        params: list[bytes],
        memory: GlobalMemory,
        *,
        limits: Limits | None = None,
        trace: MemoryTrace | None = None,
    ):
        if len(params) != len(kernel.params):
            raise Unsupported(f"{kernel.name} takes {len(kernel.params)} parameters; {len(params)} were given")
        self.module, self.kernel, self.memory = module, kernel, memory
        self.limits = limits or Limits()
        self.trace = trace
        self.hazards = trace.hazards if trace is not None else Hazards()
        self.stats = Stats()
        self.params = {p.name: value for p, value in zip(kernel.params, params, strict=True)}
        self.lines = learner_lines(kernel, module)
        scalars = {name: t for name, t in kernel.call_params.items() if t != "array"}
        declared = {**kernel.registers, **scalars}  # a call's params live per thread, like registers
        self.reg_index = {name: i for i, name in enumerate(declared)}
        self.reg_types = [storage_of(t) for t in declared.values()]
        self.printed = Printed()
        self.symbols: dict[str, tuple[str, int]] = {}  # variable -> (space, address or offset)
        self.shared_static = 0
        self._place_variables()
        for index, ins in enumerate(kernel.instructions):  # before any decoding: its arguments' st.param come first
            callee = ins.operands[0].name if ins.operands and isinstance(ins.operands[0], Sym) else "a function"
            if ins.base == "call" and callee != "vprintf":
                raise Unsupported(f"`call` of {callee} is not supported (a function not inlined)", self.lines[index])
        self.steps: list[Step] = [self._decode(i, ins) for i, ins in enumerate(kernel.instructions)]

    # Layout

    def _place_variables(self) -> None:
        shared, local = 0, 0
        variables = [*self.module.variables, *self.kernel.variables]
        for var in variables:
            if var.space == "shared" and not var.extern:
                shared = -(-shared // var.align) * var.align
                self.symbols[var.name] = ("shared", shared)
                shared += var.size
            elif var.space == "local":
                local = -(-local // var.align) * var.align
                self.symbols[var.name] = ("local", local)
                local += var.size
            elif var.space in ("global", "const"):
                data = np.frombuffer(bytearray(var.init or bytes(var.size)), dtype=np.uint8)
                self.symbols[var.name] = ("global", self.memory.add(Buffer(var.name, data, (var.size,), 1)))
        dynamic = -(-shared // 16) * 16
        for var in variables:
            if var.space == "shared" and var.extern:
                self.symbols[var.name] = ("shared", dynamic)
        self.shared_static, self.dynamic_offset, self.local_bytes = shared, dynamic, local
        if local > self.limits.max_local_bytes_per_thread:
            raise LimitExceeded(f"the kernel uses {local} bytes of local memory per thread; at most "
                                f"{self.limits.max_local_bytes_per_thread} are run")  # fmt: skip

    # Running

    def run(self, launch: Launch) -> Stats:
        """Execute the launch; KernelFault, LimitExceeded or Unsupported when it cannot finish."""
        grid, block = three(launch.grid), three(launch.block)
        block_threads = block[0] * block[1] * block[2]
        blocks = grid[0] * grid[1] * grid[2]
        if block_threads < 1 or block_threads > 1024 or blocks < 1:
            raise LimitExceeded(f"a launch of {blocks} blocks of {block_threads} threads cannot run")
        if self.kernel.required_threads and self.kernel.max_threads and three(self.kernel.max_threads) != block:
            raise KernelFault(f"the kernel requires blocks of {self.kernel.max_threads} threads (.reqntid)")
        shared = self.dynamic_offset + launch.shared_bytes if launch.shared_bytes else self.shared_static
        if shared > self.limits.max_shared_bytes:
            raise LimitExceeded(f"the launch asks {shared} bytes of shared memory per block")
        per_thread = max(8 * len(self.reg_types), 8) + self.local_bytes
        per_wave = max(1, min(self.limits.wave_threads, self.limits.max_register_bytes // per_thread) // block_threads)
        self.stats.threads += blocks * block_threads
        for first in range(0, blocks, per_wave):
            count = min(per_wave, blocks - first)
            self._run_wave(make_wave(first, count, grid, block, shared, self.reg_types, self.local_bytes))
        return self.stats

    def _run_wave(self, wave: Wave) -> None:
        steps, end = self.steps, len(self.steps)
        pc = wave.pc
        stats, budget = self.stats, self.limits.max_thread_instructions
        while True:
            if wave.exited == 0 and wave.parked == 0:
                low = int(pc.min())
                if low == int(pc.max()):
                    idx: Index = ALL
                    count = wave.threads
                else:
                    group = pc == low
                    idx, count = np.flatnonzero(group), int(group.sum())
            else:
                runnable = wave.live & ~wave.waiting
                if not runnable.any():
                    return
                masked = np.where(runnable, pc, end + 1)
                low = int(masked.min())
                group = masked == low
                idx = np.flatnonzero(group)
                count = len(idx)
            if low >= end:  # ran past the last instruction: as `ret`
                self._exit(wave, idx)
                continue
            stats.thread_instructions += count
            stats.steps += 1
            if stats.thread_instructions > budget:
                raise LimitExceeded(
                    f"the kernel ran more than {budget:,} thread-instructions on the CPU tier (an endless loop?)",
                    self.lines[low],
                    endless=True,
                )
            try:
                with np.errstate(all="ignore"):  # a GPU's arithmetic does not warn: inf, NaN and wrap-around are values
                    steps[low](wave, idx, low)
            except Fault as fault:
                raise KernelFault(
                    f"{fault.message} ({self._who(wave, idx, fault.position)})", self.lines[low]
                ) from None

    def _who(self, wave: Wave, idx: Index, position: int) -> str:
        thread = int(np.arange(wave.threads)[idx][position])
        c = {name: int(v[thread]) for name, v in wave.coords.items()}
        return (
            f"thread ({c['%tid.x']}, {c['%tid.y']}, {c['%tid.z']}) of block "
            f"({c['%ctaid.x']}, {c['%ctaid.y']}, {c['%ctaid.z']})"
        )

    def _exit(self, wave: Wave, idx: Index) -> None:
        leaving = np.zeros(wave.threads, dtype=np.bool_)
        leaving[idx] = True
        leaving &= wave.live
        wave.live &= ~leaving
        wave.exited += int(leaving.sum())
        wave.pc[idx] = len(self.steps) + 1
        self._release(wave)

    def _release(self, wave: Wave) -> None:
        """Free the parked threads of every block whose running threads have all arrived at the barrier."""
        if wave.parked == 0:
            return
        blocks = len(wave.shared.data)
        running = np.bincount(wave.block_of[wave.live], minlength=blocks)
        parked = np.bincount(wave.block_of[wave.waiting & wave.live], minlength=blocks)
        done = (running == parked) & (parked > 0)
        if done.any():
            wave.shared.new_epoch(done)
            freed = wave.waiting & done[wave.block_of]
            wave.waiting &= ~freed
            wave.parked -= int(freed.sum())

    # Decoding: each instruction becomes a function of (wave, threads, pc)

    def _decode(self, index: int, ins: Instruction) -> Step:
        line = self.lines[index]
        try:
            body, branches = self._body(ins, index)
        except Unsupported as exc:
            raise type(exc)(exc.message, line) from None
        except KeyError as exc:
            raise Unsupported(f"`{ins.opcode}`: {exc.args[0]} is not declared or not supported", line) from None
        if branches:
            return body
        if ins.guard is None:

            def step(wave: Wave, idx: Index, pc: int) -> None:
                body(wave, idx, pc)
                wave.pc[idx] = pc + 1

            return step
        guard = self._reader(Reg(ins.guard), "pred")
        negated = ins.negated

        def guarded(wave: Wave, idx: Index, pc: int) -> None:
            taken = guard(wave, idx)
            if negated:
                taken = ~taken
            chosen = _select(wave, idx, taken)
            if chosen is not None:
                body(wave, chosen, pc)
            wave.pc[idx] = pc + 1

        return guarded

    def _body(self, ins: Instruction, index: int) -> tuple[Step, bool]:
        refused.check(ins)
        base = ins.base
        if base == "bra":
            return self._branch(ins), True
        if base in ("ret", "exit"):
            return (lambda wave, idx, pc: self._exit(wave, idx)), True
        if base in ("bar", "barrier"):
            return self._barrier(ins), True
        if base == "trap":
            raise Unsupported("`trap` (an assert or __trap) stops the kernel: not run on the CPU tier")
        if base in _NO_OPS:
            return (lambda wave, idx, pc: None), False
        if base == "mov":
            return self._mov(ins), False
        if base in ("ld", "st", "atom", "red"):
            return self._memory_op(ins, index), False
        if base == "cvta":
            return self._cvta(ins), False
        if base == "shfl":
            return collective.shfl(self, ins), False
        if base in ("vote", "activemask"):
            return collective.vote(self, ins), False
        if base == "call":
            return self._printf(ins), False
        return self._alu(ins), False

    def _carry(self, ins: Instruction) -> Step:
        """An instruction that reads or writes the carry flag (`add.cc`, `addc`, `mad.lo.cc`, `madc.hi`, ...)."""
        t, types, reads, writes, fn = bits.carry_op(ins)
        dest, *sources = ins.operands
        if len(sources) != len(types):
            raise Unsupported(f"`{ins.opcode}` takes {len(types)} sources")
        readers = [self._reader(s, k) for s, k in zip(sources, types, strict=True)]
        write = self._writer(dest, t)

        def carry(wave: Wave, idx: Index, pc: int) -> None:
            n = _count(wave, idx)
            values = [np.broadcast_to(read(wave, idx), (n,)) for read in readers]
            result, out = fn(*values, wave.carry[idx])
            write(wave, idx, result)
            if writes:
                wave.carry[idx] = out

        return carry

    def _bit_field(self, ins: Instruction) -> Step:
        t, types, fn = bits.bit_field(ins)
        dest, *sources = ins.operands
        if len(sources) != len(types):
            raise Unsupported(f"`{ins.opcode}` takes {len(types)} sources")
        readers = [self._reader(s, k) for s, k in zip(sources, types, strict=True)]
        write = self._writer(dest, t)

        def field(wave: Wave, idx: Index, pc: int) -> None:
            n = _count(wave, idx)
            write(wave, idx, fn(*(np.broadcast_to(read(wave, idx), (n,)) for read in readers)))

        return field

    def _alu(self, ins: Instruction) -> Step:
        if ins.base in bits.CARRY_BASES and ("cc" in ins.mods or ins.base.endswith("c")):
            return self._carry(ins)
        if ins.base in ("bfe", "bfi"):
            return self._bit_field(ins)
        op = alu.decode(ins)
        dest, *sources = ins.operands
        if len(sources) != len(op.sources):
            raise Unsupported(f"`{ins.opcode}` takes {len(op.sources)} sources")
        readers = [self._reader(s, t) for s, t in zip(sources, op.sources, strict=True)]
        fn = op.fn
        if op.second_dest:
            first, second = (dest.first, dest.second) if isinstance(dest, Pair) else (dest, None)
            write_p = self._writer(first, "pred")
            write_q = self._writer(second, "pred") if second is not None else None

            def setp(wave: Wave, idx: Index, pc: int) -> None:
                both = fn(*(read(wave, idx) for read in readers))
                write_p(wave, idx, both[0])
                if write_q is not None:
                    write_q(wave, idx, both[1])

            return setp
        write = self._writer(dest, op.dest)

        def compute(wave: Wave, idx: Index, pc: int) -> None:
            write(wave, idx, fn(*(read(wave, idx) for read in readers)))

        return compute

    def _branch(self, ins: Instruction) -> Step:
        target = ins.operands[0] if ins.operands else None
        if not isinstance(target, Sym) or target.name not in self.kernel.labels:
            raise Unsupported(f"`{ins.opcode}` to an unknown label")
        to = self.kernel.labels[target.name]
        if ins.guard is None:

            def jump(wave: Wave, idx: Index, pc: int) -> None:
                wave.pc[idx] = to

            return jump
        guard = self._reader(Reg(ins.guard), "pred")
        negated = ins.negated

        def branch(wave: Wave, idx: Index, pc: int) -> None:
            taken = guard(wave, idx)
            if negated:
                taken = ~taken
            wave.pc[idx] = np.where(taken, to, pc + 1)

        return branch

    def _barrier(self, ins: Instruction) -> Step:
        mods = set(ins.mods) - {"aligned"}
        if "warp" in mods:
            return lambda wave, idx, pc: wave.pc.__setitem__(idx, pc + 1)
        if not mods <= {"sync"}:
            raise Unsupported(f"`{ins.opcode}` is not supported (only bar.sync / barrier.sync)")

        def barrier(wave: Wave, idx: Index, pc: int) -> None:
            wave.pc[idx] = pc + 1
            before = int(wave.waiting.sum())
            wave.waiting[idx] = True
            wave.parked += int(wave.waiting.sum()) - before
            self._release(wave)

        return barrier

    # Operands

    def _reader(self, operand: Operand, type_: str) -> Callable[[Wave, Index], Any]:
        if isinstance(operand, Reg):
            i = self.reg_index[operand.name]
            return lambda wave, idx: as_type(wave.regs[i][idx], type_)
        if isinstance(operand, Imm):
            value = immediate(operand.value, operand.bits, type_)
            return lambda wave, idx: value
        if isinstance(operand, Special):
            name = operand.name
            return lambda wave, idx: as_type(wave.special[name][idx], type_)
        if isinstance(operand, Sym):
            address = self._symbol(operand.name)
            value = immediate(address, 0, type_)
            return lambda wave, idx: value
        raise Unsupported(f"the operand {operand} cannot be read here")

    def _symbol(self, name: str) -> int:
        if name not in self.symbols:
            raise KeyError(name)
        return self.symbols[name][1]

    def _writer(self, operand: Operand, type_: str) -> Callable[[Wave, Index, Any], None]:
        if isinstance(operand, Reg) and operand.name == "_":
            return lambda wave, idx, value: None
        if not isinstance(operand, Reg):
            raise Unsupported(f"the destination {operand} is not a register")
        i = self.reg_index[operand.name]
        storage = self.reg_types[i]

        def write(wave: Wave, idx: Index, value: Any) -> None:
            wave.regs[i][idx] = to_bits(value, type_, storage)

        return write

    def _mov(self, ins: Instruction) -> Step:
        type_ = ins.mods[-1]
        dest, source = ins.operands
        if isinstance(source, Vec):  # pack {lo, hi} into a wider register
            width = DTYPES[type_].itemsize * 8 // len(source.items)
            part = f"b{width}"
            readers = [self._reader(item, part) for item in source.items]
            write = self._writer(dest, type_)
            wide = DTYPES[type_]

            def pack(wave: Wave, idx: Index, pc: int) -> None:
                total = np.zeros((), dtype=wide)
                for k, read in enumerate(readers):
                    total = total | (np.asarray(read(wave, idx)).astype(wide) << wide.type(k * width))
                write(wave, idx, total)

            return pack
        if isinstance(dest, Vec):  # unpack a wider register into {lo, hi}
            width = DTYPES[type_].itemsize * 8 // len(dest.items)
            part = f"b{width}"
            read = self._reader(source, type_)
            writers = [self._writer(item, part) for item in dest.items]
            narrow = DTYPES[part]

            def unpack(wave: Wave, idx: Index, pc: int) -> None:
                value = np.asarray(read(wave, idx))
                for k, write in enumerate(writers):
                    write(wave, idx, (value >> value.dtype.type(k * width)).astype(narrow))

            return unpack
        read, write = self._reader(source, type_), self._writer(dest, type_)
        return lambda wave, idx, pc: write(wave, idx, read(wave, idx))

    def _cvta(self, ins: Instruction) -> Step:
        spaces = [m for m in ins.mods if m in _SPACES]
        type_ = ins.mods[-1]
        to = "to" in ins.mods
        windows = {"global": 0, "const": 0, "shared": SHARED_WINDOW, "local": LOCAL_WINDOW}
        window = windows.get(spaces[0] if spaces else "")
        if window is None:
            raise Unsupported(f"`{ins.opcode}` is not supported")
        read, write = self._reader(ins.operands[1], "u64"), self._writer(ins.operands[0], type_)
        shift = np.uint64(window)

        def cvta(wave: Wave, idx: Index, pc: int) -> None:
            value = read(wave, idx)
            write(wave, idx, (value - shift if to else value + shift).astype(DTYPES[type_]))

        return cvta

    # Memory

    def _address(self, operand: Operand) -> Callable[[Wave, Index], np.ndarray]:
        if not isinstance(operand, Addr):
            raise Unsupported(f"{operand} is not an address")
        offset = operand.offset
        if isinstance(operand.base, Reg):
            i = self.reg_index[operand.base.name]
            return lambda wave, idx: wave.regs[i][idx].astype(np.int64) + offset
        base = self._symbol(operand.base.name) if isinstance(operand.base, Sym) else 0
        constant = np.int64(base + offset)
        return lambda wave, idx: np.broadcast_to(constant, (_count(wave, idx),))

    def _memory_op(self, ins: Instruction, index: int) -> Step:
        mods = [m for m in ins.mods if "::" not in m and m not in _CACHE_HINTS and m not in _SCOPES]
        space = next((m for m in mods if m in _SPACES), "generic")
        vector = next((int(m[1:]) for m in mods if m in ("v2", "v4", "v8")), 1)
        type_ = mods[-1]
        if type_ not in DTYPES or type_ == "pred":
            raise Unsupported(f"`{ins.opcode}`: the type is not supported")
        known = {space, type_, f"v{vector}", "sync", "aligned"}
        if ins.base in ("atom", "red"):
            return collective.atomic(self, ins, index, space, type_, [m for m in mods if m not in known])
        extra = [m for m in mods if m not in known]
        if extra:
            raise Unsupported(f"`{ins.opcode}`: .{extra[0]} is not supported")
        if space == "param":
            call_param = isinstance(ins.operands[0 if ins.base == "st" else 1], Addr) and self._call_param(ins)
            return call_param or self._load_param(ins, type_)
        dtype = DTYPES[type_]
        load = ins.base == "ld"
        target, where = (ins.operands[0], ins.operands[1]) if load else (ins.operands[1], ins.operands[0])
        address = self._address(where)
        items = list(target.items) if isinstance(target, Vec) else [target]
        if len(items) != vector:
            raise Unsupported(f"`{ins.opcode}` needs {vector} registers")
        line = self.lines[index]
        if load:
            writers = [self._writer(item, type_) for item in items]

            def ld(wave: Wave, idx: Index, pc: int) -> None:
                values = self._access(wave, idx, address(wave, idx), space, dtype, vector, None, line)
                if vector == 1:
                    writers[0](wave, idx, values)
                else:
                    for k, write in enumerate(writers):
                        write(wave, idx, values[:, k])

            return ld
        readers = [self._reader(item, type_) for item in items]

        def st(wave: Wave, idx: Index, pc: int) -> None:
            n = _count(wave, idx)
            values = np.stack([np.broadcast_to(read(wave, idx), (n,)) for read in readers], axis=1)
            self._access(wave, idx, address(wave, idx), space, dtype, vector, values, line)

        return st

    def _call_param(self, ins: Instruction) -> Step | None:
        """`st.param [param0+0], %rd` / `ld.param %r, [retval0+0]`: a call's parameter, kept like a register."""
        where = ins.operands[0] if ins.base == "st" else ins.operands[1]
        if not isinstance(where, Addr) or not isinstance(where.base, Sym):
            return None
        name = where.base.name
        if name not in self.kernel.call_params:
            return None
        if where.offset != 0:
            raise Unsupported(f"`{ins.opcode}` at an offset in the call parameter {name}")
        type_ = ins.mods[-1]
        if ins.base == "st":
            read, write = self._reader(ins.operands[1], type_), self._writer(Reg(name), type_)
        else:
            read, write = self._reader(Reg(name), type_), self._writer(ins.operands[0], type_)
        return lambda wave, idx, pc: write(wave, idx, read(wave, idx))

    def _printf(self, ins: Instruction) -> Step:
        """`call vprintf, (format, args)`: each thread of the group prints, in thread order; the result is 0."""
        call = ins.operands[1] if len(ins.operands) > 1 else None
        if not isinstance(call, CallArgs) or len(call.args) != 2:
            raise Unsupported("a `vprintf` call without its two arguments")
        read_format = self._reader(Reg(call.args[0]), "u64")
        read_args = self._reader(Reg(call.args[1]), "u64")
        write = self._writer(Reg(call.returns[0]), "b32") if call.returns else None

        def printf(wave: Wave, idx: Index, pc: int) -> None:
            n = _count(wave, idx)
            formats = np.broadcast_to(read_format(wave, idx), (n,))
            buffers = np.broadcast_to(read_args(wave, idx), (n,))
            for position, thread in enumerate(np.arange(wave.threads)[idx]):
                fmt = self._string(int(formats[position]))
                base = int(buffers[position]) - LOCAL_WINDOW

                def read(offset: int, size: int, thread: int = thread, base: int = base, at: int = position) -> bytes:
                    start = base + offset
                    if base < 0 or start < 0 or start + size > wave.local.size:
                        raise Fault(at, "printf's arguments are not where the compiler put them")
                    return wave.local.data[thread, start : start + size].tobytes()

                text, _ = format_printf(fmt, read, self._string)
                self.printed.add(text)
            if write is not None:
                write(wave, idx, np.uint32(0))

        return printf

    def _string(self, address: int) -> bytes:
        """The bytes of a NUL-terminated string in global memory (printf's format and `%s`), bounded."""
        which, offsets = self.memory.locate(np.array([address], dtype=np.uint64), 1, "load")
        data = self.memory.buffers[int(which[0])].data[int(offsets[0]) : int(offsets[0]) + 1024]
        return bytes(data).split(b"\0", 1)[0]

    def _load_param(self, ins: Instruction, type_: str) -> Step:
        where = ins.operands[1]
        if not isinstance(where, Addr) or not isinstance(where.base, Sym) or where.base.name not in self.params:
            raise Unsupported(f"`{ins.opcode}` reads no parameter of this kernel")
        raw = self.params[where.base.name]
        dtype = DTYPES[type_]
        if where.offset < 0 or where.offset + dtype.itemsize > len(raw):
            raise Unsupported(f"`{ins.opcode}` reads past the parameter {where.base.name}")
        value = np.frombuffer(raw, dtype=dtype, count=1, offset=where.offset)[0]
        write = self._writer(ins.operands[0], type_)
        return lambda wave, idx, pc: write(wave, idx, value)

    def _access(
        self,
        wave: Wave,
        idx: Index,
        addresses: np.ndarray,
        space: str,
        dtype: np.dtype,
        vector: int,
        values: np.ndarray | None,
        line: int | None,
        atomic: bool = False,
    ) -> Any:
        """Check, trace and make one load (values None) or store; returns what a load read.

        An atomic is a load then a store of the same addresses (`atomic=True`): traced once, as an atomic
        access, and never a race.
        """
        size = dtype.itemsize * vector
        verb = "load" if values is None else "store"
        traced = self.trace is not None and not (atomic and values is not None)
        if space == "generic":
            space, addresses = _resolve_generic(addresses)
        if space in ("global", "const"):
            which, offsets = self.memory.locate(addresses, size, verb)
            if traced:
                kind = "atomic" if atomic else verb
                self._trace(wave, idx, line, kind, "global", int(which[0]) if len(which) else 0, addresses, size)
            if values is None:
                return self.memory.gather(which, offsets, dtype, vector)
            self.memory.scatter(which, offsets, values, dtype)
            return None
        if space == "shared" and atomic:
            offsets = wave.shared.check(addresses, size, verb)
            if traced:
                self._trace(wave, idx, line, "atomic", "shared", 0, offsets, size)
            rows = wave.block_of[idx]
            if values is None:
                return wave.shared.gather(rows, offsets, dtype, vector)
            wave.shared.scatter(rows, offsets, values, dtype)
            return None
        if space == "shared":
            return self._shared(wave, idx, addresses, dtype, vector, values, line)
        offsets = wave.local.check(addresses, size, verb)
        rows = np.arange(wave.threads)[idx]
        if values is None:
            return wave.local.gather(rows, offsets, dtype, vector)
        wave.local.scatter(rows, offsets, values, dtype)
        return None

    def _shared(
        self,
        wave: Wave,
        idx: Index,
        addresses: np.ndarray,
        dtype: np.dtype,
        vector: int,
        values: np.ndarray | None,
        line: int | None,
    ) -> Any:
        size = dtype.itemsize * vector
        offsets = wave.shared.check(addresses, size, "load" if values is None else "store")
        rows, warps = wave.block_of[idx], wave.warp[idx]
        if self.trace is not None:
            self._trace(wave, idx, line, "load" if values is None else "store", "shared", 0, offsets, size)
        if values is None:
            loaded, raced, uninitialised = wave.shared.load(rows, offsets, dtype, vector, warps)
            self.hazards.count(line, "race", raced)
            self.hazards.count(line, "uninitialised", uninitialised)
            return loaded
        self.hazards.count(line, "race", wave.shared.store(rows, offsets, values, dtype, warps))
        return None

    def _trace(
        self,
        wave: Wave,
        idx: Index,
        line: int | None,
        verb: str,
        kind: Literal["global", "shared"],
        number: int,
        addresses: Any,
        size: int,
    ) -> None:
        assert self.trace is not None
        shape = (len(self.memory.buffers[number].data) // size,) if kind == "global" else (wave.shared.size // size,)
        space = Space(kind, shape, size)
        self.trace.record((line or 0, verb, kind, number), space, wave.warp[idx], wave.lane[idx], addresses, size)


def _resolve_generic(addresses: np.ndarray) -> tuple[str, np.ndarray]:
    """The space of generic addresses (all one space in a group) and the addresses within it."""
    addresses = addresses.astype(np.int64)
    if len(addresses) == 0:
        return "global", addresses
    for space, window in (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW)):
        inside = (addresses >= window) & (addresses < window + WINDOW_BYTES)
        if inside.all():
            return space, addresses - window
        if inside.any():
            raise Fault(int(np.flatnonzero(~inside)[0]), "a generic access mixes shared or local memory with others")
    return "global", addresses
