"""The instructions the CPU tier's executor refuses by name: the hardware units it does not model.

A kernel that uses one is never run wrongly: decoding stops at the first, and the job is `not_run` (CUDA C++)
or runs where the language's fallback runs it, with a message naming the opcode and the learner's line.
Matched on the opcode's leading words, so `cp.async.commit_group` and `wmma.load.a.sync...` are caught too.
"""

from __future__ import annotations

from gpu_worker.ptx.errors import Unsupported
from gpu_worker.ptx.program import Instruction

# opcode prefix (dot-separated words) -> what it is, in the learner's words
REFUSED: dict[str, str] = {
    "mma": "tensor cores' matrix multiply-accumulate",
    "wmma": "tensor cores' warp matrix operations",
    "wgmma": "warpgroup matrix multiply-accumulate",
    "ldmatrix": "a tensor-core matrix load from shared memory",
    "stmatrix": "a tensor-core matrix store to shared memory",
    "movmatrix": "a tensor-core matrix transpose",
    "cp.async": "an asynchronous copy",
    "cp.reduce.async": "an asynchronous copy and reduction",
    "mbarrier": "an asynchronous-transaction barrier",
    "match": "a warp match (__match_any_sync / __match_all_sync)",
    "redux": "a warp-wide reduction (__reduce_*_sync)",
    "elect": "a warp leader election",
    "tex": "a texture fetch",
    "tld4": "a texture gather",
    "txq": "a texture query",
    "suld": "a surface load",
    "sust": "a surface store",
    "sured": "a surface reduction",
    "suq": "a surface query",
    "setmaxnreg": "a warpgroup register reallocation",
    "griddepcontrol": "programmatic dependent launch",
    "tcgen05": "fifth-generation tensor cores",
}


class Refused(Unsupported):
    """An instruction of `REFUSED`: its message names the executor, the opcode and the line."""

    def located(self) -> str:
        return f"{self.message} at line {self.line}" if self.line else self.message


def what_is_refused(opcode: str) -> str | None:
    """What the opcode is, in words, when the executor refuses it; None when it is not one of `REFUSED`."""
    words = opcode.split(".")
    for length in (3, 2, 1):
        what = REFUSED.get(".".join(words[:length]))
        if what is not None:
            return what
    return None


def check(ins: Instruction) -> None:
    """Raise `Refused` when the instruction is one the executor does not model (see `REFUSED`)."""
    what = what_is_refused(ins.opcode)
    if what is not None:
        raise Refused(f"not supported by the CPU tier's executor: `{ins.opcode}` ({what})", ins.line)
