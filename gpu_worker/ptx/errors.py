"""The errors of parsing and running PTX, each able to name the learner's source line it happened on."""

from __future__ import annotations


class PtxError(Exception):
    """Something about the PTX or its run that the learner can act on; `line` is their source line (or None)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line

    def located(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class PtxSyntaxError(PtxError):
    """PTX text the parser cannot read (the compiler's output never is: a defect, or hand-made PTX)."""


class Unsupported(PtxError):
    """An instruction or directive the executor does not run; refused by name rather than run wrongly."""


class KernelFault(PtxError):
    """The kernel did what a GPU would fault on: an address outside every buffer, or misaligned."""


class LimitExceeded(PtxError):
    """The launch went past the executor's bounds (instructions executed, threads, memory).

    `endless` when it is the instruction budget: a kernel that would run on a GPU until its time limit.
    """

    def __init__(self, message: str, line: int | None = None, *, endless: bool = False):
        super().__init__(message, line)
        self.endless = endless
