"""The interface every backend implements, and the error that carries a learner's verdict.

A backend lives in the sandboxed child. The child calls `compile` once, then
`launch` once per size with arguments made by `gpu_worker.exercise.inputs`, and sends
the outputs back to the engine, which checks them. `compile` and `launch`
raise `LearnerError` when the learner's code is at fault (the verdict rides on
it); any other exception is an infrastructure failure.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_worker.exercise.launch import LaunchConfig
from gpu_worker.protocol import ArgSpec, CheckInfo, CompileInfo, Diagnostic, Language, Verdict


class LearnerError(Exception):
    """The learner's code failed: compile_error, runtime_error or rejected, with where and why."""

    def __init__(
        self,
        verdict: Verdict,
        message: str,
        diagnostics: list[Diagnostic] | None = None,
        compile_info: CompileInfo | None = None,
    ):
        super().__init__(message)
        self.verdict = verdict
        self.message = message
        self.diagnostics = diagnostics or []
        self.compile_info = compile_info


@dataclass
class Compiled:
    """A compiled kernel: what the compiler said, and a handle `launch` accepts (None: cannot run here).

    `listing`, when set, returns what was left out of `info` to send it sooner (`{"sass_excerpt", "notes"}`):
    the child calls it once, after the kernel ran, and sends it as the job's `listing` message.
    `ptx` goes out with the compile report: on the sim backend the engine takes the kernel's registers,
    shared memory, spills and local memory from its own `ptxas` run on it, not from the report.
    """

    info: CompileInfo
    handle: Any = None
    not_run_reason: str = ""
    notes: list[str] = field(default_factory=list)
    listing: Callable[[], dict[str, Any]] | None = None
    ptx: str | None = None  # the whole PTX, for the engine to assemble itself (`engine_facts`) on the sim backend
    answer: dict[str, Any] | None = None  # a fresh compile process's answer, for the engine's `compile_cache`


class Backend(ABC):
    """Compile and launch learners' kernels on one kind of device."""

    name: str = ""

    @abstractmethod
    def device(self) -> str:
        """The device in words, e.g. 'NVIDIA H200 (MIG 3g.71gb)'."""

    @abstractmethod
    def compile(
        self,
        language: Language,
        source: str,
        entry: str,
        args: list[ArgSpec],
        workdir: Path,
        options: dict[str, Any] | None = None,
    ) -> Compiled:
        """Compile `source` and find kernel `entry` taking `args`; raise LearnerError for the learner's faults.

        `options` is the exercise's Triton launch (`protocol.TritonLaunch` as data) for a Triton kernel.
        """

    @abstractmethod
    def launch(self, handle: Any, args: list[Any], config: LaunchConfig, check: Any = None) -> list[CheckInfo] | None:
        """Run the kernel once on host arrays (outputs are written back into them); raise LearnerError.

        A backend whose process may judge (`cuda`: it never imports learner code) takes `check` and returns
        the checks it made on the device instead of copying the outputs back.
        """

    def close(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release the device (called once, at the end of the job)."""
