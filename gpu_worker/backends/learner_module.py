"""Load the learner's Python file as a module, so tracebacks and Numba errors name their file and lines."""

from __future__ import annotations

import sys
import types
from pathlib import Path

MODULE_NAME = "submission"


def import_learner_module(path: Path, name: str = MODULE_NAME) -> types.ModuleType:
    """Compile then execute the file; SyntaxError comes from the compile, anything else from running it."""
    code = compile(path.read_text(), str(path), "exec")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    exec(code, module.__dict__)
    return module
