"""The verdict an exception earns when it is raised while the learner's module is imported.

Shared by the backends that import the learner's module in the measuring process (`sim`, `triton_sim`):
a syntax error or a module rule broken is a compile error at its line; running out of memory, exiting or
recursing too deep at import is a runtime error; anything else the import raised is a compile error.
"""

from __future__ import annotations

from pathlib import Path

from gpu_worker.backends.base import LearnerError
from gpu_worker.backends.learner_module import ModuleRuleError
from gpu_worker.exercise.diagnostics import from_exception, from_syntax_error
from gpu_worker.protocol import Diagnostic


def located(diagnostic: Diagnostic) -> str:
    """A diagnostic as one line of words, led by its line number when it has one."""
    return f"line {diagnostic.line}: {diagnostic.message}" if diagnostic.line else diagnostic.message


def import_failure(exc: BaseException, path: Path) -> LearnerError:
    """Sort an exception raised while the module was imported into the verdict it earns."""
    if isinstance(exc, SyntaxError):
        diagnostic = from_syntax_error(exc)
        return LearnerError("compile_error", located(diagnostic), [diagnostic])
    if isinstance(exc, ModuleRuleError):
        diagnostic = Diagnostic(line=exc.line, column=exc.column, message=exc.message)
        return LearnerError("compile_error", located(diagnostic), [diagnostic])
    diagnostic = from_exception(exc, str(path))
    if isinstance(exc, MemoryError):
        diagnostic.message = "MemoryError: out of memory while the module was imported (the job's memory limit)"
        return LearnerError("runtime_error", located(diagnostic), [diagnostic])
    if isinstance(exc, (OSError, SystemExit, KeyboardInterrupt, RecursionError)):
        return LearnerError("runtime_error", "while importing your module: " + located(diagnostic), [diagnostic])
    return LearnerError("compile_error", located(diagnostic), [diagnostic])
