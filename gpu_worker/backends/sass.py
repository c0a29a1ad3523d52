"""SASS, the GPU's own machine code, with the learner's source lines between its instructions.

ptxas writes a cubin with line information next to the PTX it assembles;
nvdisasm (NVIDIA's `nvidia-cuda-nvdisasm` wheel, or the toolkit's) turns its
code section back into text, marking where each source line's instructions
start. We keep the learner's kernel only and put each marked line's own text
there, so that `c[i] = a[i] + b[i]` stands above its LDG, LDG, FADD and STG.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

from gpu_worker.backends import toolkit

LINE_MARK = re.compile(r'^\s*//## File "[^"]*", line (\d+)')
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*$")
SECTION = re.compile(r"^//-+ (\S+)")


def find_nvdisasm() -> str | None:
    """nvdisasm on PATH, else the one NVIDIA's wheel installs under site-packages/nvidia/cu*/bin."""
    found = toolkit.find_tool("nvdisasm")
    if found:
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(Path(root).glob("cu*/bin/nvdisasm")):
            return str(candidate)
    return None


def disassemble(cubin: Path, timeout: float = 30) -> str:
    """nvdisasm's text of the cubin's code sections, with line marks; raises OSError or RuntimeError."""
    return Disassembly(cubin, timeout=timeout).text()


class Disassembly:
    """nvdisasm started at once in the background, its text read later: the SASS never delays a compile report.

    nvdisasm takes 0.3 s of CPU even for vector-add, more than compiling it; the simulator path starts it as soon
    as ptxas has written the cubin, sends the compile report, runs the kernel, and only then reads the listing.
    Its output goes to a file beside the cubin, so a long listing never blocks it on a full pipe.
    """

    def __init__(self, cubin: Path, timeout: float = 30):
        self.timeout = timeout
        self.output = cubin.with_suffix(".sass")
        self.proc: subprocess.Popen[bytes] | None = None
        self.problem = ""
        tool = find_nvdisasm()
        if tool is None:
            self.problem = "nvdisasm is not installed on this worker"
            return
        try:
            with self.output.open("wb") as out:
                self.proc = subprocess.Popen(
                    [tool, "-g", "-c", str(cubin)], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE
                )
        except OSError as exc:
            self.problem = str(exc)

    def text(self) -> str:
        """The listing, once nvdisasm is done; raises OSError or RuntimeError as `disassemble` does."""
        if self.proc is None:
            raise FileNotFoundError(self.problem)
        try:
            _, err = self.proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise RuntimeError(f"nvdisasm took longer than {self.timeout:g} s") from None
        if self.proc.returncode != 0:
            raise RuntimeError(f"nvdisasm failed: {err.decode(errors='replace').strip()[:500]}")
        return self.output.read_text(errors="replace")

    def excerpt(self, symbol: str, source: str, name: str | None = None) -> tuple[str | None, str | None]:
        """(annotated SASS, None), or (None, why it is missing)."""
        try:
            return annotate(self.text(), symbol, source, name), None
        except (OSError, RuntimeError) as exc:
            return None, f"no SASS: {exc}"[:300]


def annotate(listing: str, symbol: str, source: str, name: str | None = None, max_lines: int = 160) -> str | None:
    """The kernel `symbol`'s instructions with `// line N: <source>` above each line's first one."""
    lines = source.splitlines()
    out: list[str] = []
    inside = False
    for raw in listing.splitlines():
        section = SECTION.match(raw)
        if section:
            inside = section.group(1) == f".text.{symbol}"
            continue
        if not inside:
            continue
        mark = LINE_MARK.match(raw)
        if mark:
            number = int(mark.group(1))
            text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
            out.append(f"// line {number}: {text}")
            continue
        instruction = INSTRUCTION.match(raw)
        if instruction and instruction.group(1) != "NOP ;" and instruction.group(1) != "NOP;":
            out.append(f"    {instruction.group(1)}")  # NOPs only pad the section to its alignment
    if not out:
        return None
    if len(out) > max_lines:
        out = out[:max_lines] + [f"// ... {len(out) - max_lines} more lines"]
    text = "\n".join(out)
    return text.replace(symbol, name) if name else text


def excerpt(cubin: Path, symbol: str, source: str, name: str | None = None) -> tuple[str | None, str | None]:
    """(annotated SASS, None), or (None, why it is missing) when nvdisasm is absent or fails."""
    return Disassembly(cubin).excerpt(symbol, source, name)
