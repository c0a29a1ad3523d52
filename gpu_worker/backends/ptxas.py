"""Assemble PTX with `ptxas -v` and read what it reports about each kernel.

`ptxas -v` prints, per function:

    ptxas info    : Compiling entry function 'vector_add' for 'sm_90'
    ptxas info    : Function properties for vector_add
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 15 registers, used 0 barriers, 1024 bytes smem, 380 bytes cmem[0]

The same lines come through `nvcc -Xptxas -v`. Both the Numba and the CUDA C++
paths assemble with this module, so their numbers are comparable.
"""

from __future__ import annotations

import importlib.util
import math
import re
import resource
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpu_worker.backends import toolkit
from gpu_worker.protocol import CompileInfo

ARCH = "sm_90"
_COMPILING = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>\w+)'")
_PROPERTIES = re.compile(r"Function properties for (?P<name>\S+)")
_FRAME = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, (?P<loads>\d+) bytes spill loads"
)
_USED = re.compile(r"Used (?P<registers>\d+) registers")
_BARRIERS = re.compile(r"used (?P<barriers>\d+) barriers")
_SMEM = re.compile(r"(?P<smem>\d+) bytes smem")
_CMEM = re.compile(r"(?P<cmem>\d+) bytes cmem\[0\]")
_ENTRY = re.compile(r"\.entry\s+(?P<name>[\w$]+)\s*\(")


@dataclass
class KernelStats:
    name: str
    arch: str = ARCH
    registers: int | None = None
    shared_bytes: int = 0
    stack_frame_bytes: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    barriers: int = 0
    constant_bytes: int = 0

    def fill(self, info: CompileInfo) -> CompileInfo:
        """Copy these numbers into a CompileInfo."""
        info.registers = self.registers
        info.shared_bytes = self.shared_bytes
        info.spill_bytes = self.spill_store_bytes
        info.spill_store_bytes = self.spill_store_bytes
        info.spill_load_bytes = self.spill_load_bytes
        info.local_bytes = self.stack_frame_bytes
        info.barriers = self.barriers
        info.constant_bytes = self.constant_bytes
        info.arch = self.arch
        info.entry_symbol = self.name
        return info


def parse_verbose(text: str) -> dict[str, KernelStats]:
    """Per-entry statistics from `ptxas -v` output (device functions are skipped)."""
    kernels: dict[str, KernelStats] = {}
    current: KernelStats | None = None
    for line in text.splitlines():
        if m := _COMPILING.search(line):
            current = kernels.setdefault(m["name"], KernelStats(m["name"], m["arch"]))
            continue
        if m := _PROPERTIES.search(line):
            current = kernels.get(m["name"])
            continue
        if current is None:
            continue
        if m := _FRAME.search(line):
            current.stack_frame_bytes = int(m["stack"])
            current.spill_store_bytes = int(m["stores"])
            current.spill_load_bytes = int(m["loads"])
        if m := _USED.search(line):
            current.registers = int(m["registers"])
            if b := _BARRIERS.search(line):
                current.barriers = int(b["barriers"])
            if s := _SMEM.search(line):
                current.shared_bytes = int(s["smem"])
            if c := _CMEM.search(line):
                current.constant_bytes = int(c["cmem"])
    return kernels


def entries(ptx: str) -> list[str]:
    """The names of the `.entry` functions (kernels) in a PTX module."""
    return _ENTRY.findall(ptx)


def excerpt(ptx: str, entry: str, max_lines: int = 60) -> str:
    """The kernel's body from the PTX, cut to `max_lines`; long mangled names are not shortened."""
    lines = ptx.splitlines()
    start = next((i for i, line in enumerate(lines) if ".entry" in line and entry in line), 0)
    body = [line for line in lines[start:] if not line.lstrip().startswith("//")]
    cut = body[:max_lines]
    if len(body) > max_lines:
        cut.append(f"// ... {len(body) - max_lines} more lines")
    return "\n".join(cut)


def find_ptxas() -> str | None:
    """ptxas on PATH, else the toolkit's."""
    return toolkit.find_tool("ptxas")


def version() -> str:
    return toolkit.release("ptxas")


def assemble(
    ptx_path: Path,
    arch: str = ARCH,
    timeout: float = 60,
    tool: str | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> tuple[dict[str, KernelStats], str]:
    """Run `ptxas -v` (the toolkit's, or `tool`) on a PTX file; returns the per-kernel statistics and its messages.

    Raises FileNotFoundError when there is no ptxas and RuntimeError when it fails.
    """
    tool = tool or find_ptxas()
    if tool is None:
        raise FileNotFoundError("ptxas is not installed on this worker")
    cubin = ptx_path.with_suffix(".cubin")
    proc = subprocess.run(
        [tool, "-v", f"-arch={arch}", "--generate-line-info", str(ptx_path), "-o", str(cubin)],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec_fn,
    )
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise RuntimeError(f"ptxas failed: {text.strip()[:2000]}")
    return parse_verbose(text), text


FACTS_FIELDS = (
    "registers",
    "shared_bytes",
    "spill_bytes",
    "spill_store_bytes",
    "spill_load_bytes",
    "local_bytes",
    "barriers",
    "constant_bytes",
    "entry_symbol",
)
MAX_PTX_CHARS = 2 << 20  # the wire's limit on a `compiled` message
UNTRUSTED_PTXAS_SECONDS = 30
UNTRUSTED_PTXAS_BYTES = 2 << 30


def _ptxas_limits() -> None:
    """In ptxas's own process: bounded memory and CPU, for PTX that came through a learner's process."""
    resource.setrlimit(resource.RLIMIT_AS, (UNTRUSTED_PTXAS_BYTES, UNTRUSTED_PTXAS_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (UNTRUSTED_PTXAS_SECONDS, UNTRUSTED_PTXAS_SECONDS))


def kernel_symbol(ptx: str, entry: str) -> str | None:
    """The `.entry` that is the exercise's kernel: named `entry`, else the first whose (mangled) name holds it."""
    names = entries(ptx)
    return entry if entry in names else next((name for name in names if entry in name), None)


_TARGET = re.compile(r"^\.target\s+(sm_\d{2,3}a?)\b", re.MULTILINE)
_MAXNTID = re.compile(r"\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")


def triton_ptxas() -> str | None:
    """The ptxas that Triton ships (its PTX is often newer than the toolkit's ptxas reads), found without
    importing Triton; None when this Python has no Triton."""
    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "backends" / "nvidia" / "bin"
    found = next((folder / name for name in ("ptxas-blackwell", "ptxas") if (folder / name).is_file()), None)
    return str(found) if found else None


def _threads_per_block(ptx: str) -> int:
    """The block size the PTX declares (`.maxntid`, as Triton writes), else the device's 1024."""
    match = _MAXNTID.search(ptx)
    return math.prod(int(g) for g in match.groups() if g) if match else 1024


def engine_facts(info: CompileInfo, ptx: str | None, entry: str, tool: str, *, triton: bool = False) -> CompileInfo:
    """`info` with its compiler facts replaced by this process's own `ptxas -v` on `ptx`, labelled `tool`.

    On the sim backend the compile report comes through processes that import the learner's module, so
    its registers, shared memory, spills and local memory are only a claim: the engine assembles the PTX
    it was sent itself and keeps none of the claimed numbers (nor the claimed tool), even when it cannot
    assemble (then they are unknown, and a note says why). `triton`: assembled with Triton's own ptxas;
    Triton's shared memory (dynamic) and block size (num_warps) are its compiler's launch metadata, absent
    from the PTX, so they are kept from the report, and a note says so.
    """
    trusted = info.model_copy(deep=True)
    for name in FACTS_FIELDS:
        setattr(trusted, name, None)
    assembler = triton_ptxas() if triton else find_ptxas()
    assembled_by = "Triton's ptxas" if triton else f"ptxas {version()}"
    trusted.tool = f"{tool} + {assembled_by} (run by the engine)"
    trusted.arch, trusted.max_threads_per_block, trusted.ptx_excerpt = ARCH, 1024, None
    symbol = kernel_symbol(ptx, entry) if ptx and len(ptx) <= MAX_PTX_CHARS else None
    if ptx is None or symbol is None:
        trusted.notes.append("registers and spills unknown: no PTX with this exercise's kernel came with the report")
        return trusted
    trusted.ptx_excerpt = excerpt(ptx, symbol).replace(symbol, entry)  # the mangled name is unreadable
    trusted.max_threads_per_block = _threads_per_block(ptx)
    target = _TARGET.search(ptx)
    try:
        with tempfile.TemporaryDirectory(prefix="warplab-ptxas-") as folder:
            path = Path(folder) / "kernel.ptx"
            path.write_text(ptx)
            arch = target.group(1) if target else ARCH
            stats, _ = assemble(path, arch, UNTRUSTED_PTXAS_SECONDS, assembler, _ptxas_limits)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
        trusted.notes.append(f"registers and spills unknown: {exc}"[:500])
        return trusted
    if symbol not in stats:
        trusted.notes.append("ptxas did not report the kernel")
        return trusted
    stats[symbol].fill(trusted)
    trusted.arch = ARCH
    if triton:  # launch metadata of Triton's compiler, not in the PTX: kept, bounded, and said to be its word
        trusted.shared_bytes = info.shared_bytes
        trusted.max_threads_per_block = min(info.max_threads_per_block or 1024, 1024)
        trusted.notes.append("shared memory and block size: Triton's own figures (not in the PTX the engine assembled)")
    return trusted
