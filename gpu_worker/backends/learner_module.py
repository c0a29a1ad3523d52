"""Load the learner's Python file as a module, so tracebacks and Numba errors name their file and lines.

Before anything executes, the module level is held to `module_rules` (imports,
constants, kernel definitions): code that runs at import is code that could
patch the harness from inside its own process.
"""

from __future__ import annotations

import ast
import os
import sys
import types
from pathlib import Path

from gpu_worker.backends.module_rules import check_module

MODULE_NAME = "submission"
# Set by the child when the engine asked for the rules off: only the sandbox's own tests do, to reach its walls.
UNCHECKED_ENV = "WARPLAB_UNCHECKED_MODULE"


class ModuleRuleError(Exception):
    """The learner's module does something at module level that a kernel file may not do."""

    def __init__(self, path: Path, line: int, column: int, message: str):
        super().__init__(message)
        self.filename = str(path)
        self.line = line
        self.column = column
        self.message = message


def import_learner_module(
    path: Path, name: str = MODULE_NAME, *, kernel_file: bool = True, language: str = "numba"
) -> types.ModuleType:
    """Parse, check the module level (a kernel file's rules, Numba's or Triton's by `language`; `kernel_file=False`
    for plain Python that runs sandboxed and is judged by what it returns, such as a scheduling policy), compile,
    then execute the file.

    SyntaxError comes from the parse, ModuleRuleError from the rules, anything else from running it.
    """
    text = path.read_text()
    tree = ast.parse(text, str(path))
    breach = None if not kernel_file or os.environ.get(UNCHECKED_ENV) == "1" else check_module(tree, language)
    if breach is not None:
        raise ModuleRuleError(path, breach.line, breach.column, breach.message)
    code = compile(tree, str(path), "exec")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    exec(code, module.__dict__)
    return module
