"""Where the CUDA toolkit's command-line tools are (nvcc, ptxas, nvdisasm) and which release they are."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

TOOLKIT_BIN = "/usr/local/cuda/bin"


def find_tool(name: str) -> str | None:
    """The tool on PATH, else the toolkit's own copy, else None."""
    fallback = os.path.join(TOOLKIT_BIN, name)
    return shutil.which(name) or (fallback if os.path.exists(fallback) else None)


@functools.cache
def release(name: str) -> str:
    """The release a tool reports (`release 13.0,` in its `--version`), or "" when it is missing."""
    tool = find_tool(name)
    if tool is None:
        return ""
    out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\S+),", out)
    return m.group(1) if m else ""
