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

import re
import subprocess
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
    ptx_path: Path, arch: str = ARCH, timeout: float = 60, tool: str | None = None
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
    )
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise RuntimeError(f"ptxas failed: {text.strip()[:2000]}")
    return parse_verbose(text), text
