"""The learner's compile process seen from the sandboxed child: started warm, asked once, then stopped.

`CompileServer()` starts `gpu_worker.backends.numba_ptx --serve` (Numba
imported, its first compilation done) before the learner's code exists; a
spare starts one during its warm-up. `compile(...)` hands it the learner's
file, `result()` reads its one JSON answer (bounded), `stop()` kills its
whole process group, so nothing the learner's module did is alive while the
kernel is measured. `learner_error` turns a failed answer into the verdict it
earns.

A Triton file gets a server of its own kind (`CompileServer("triton_ptx")`,
`gpu_worker.backends.triton_ptx`), started cold when its job arrives: a spare
warms the Numba one, which a Triton job stops unused.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpu_worker.backends.base import LearnerError
from gpu_worker.backends.learner_module import UNCHECKED_ENV
from gpu_worker.protocol import ArgSpec, CompileInfo, Diagnostic

MAX_ANSWER_BYTES = 8 * 1024 * 1024  # the PTX of a large kernel with line info, and its listings


def types_spec(args: list[ArgSpec]) -> list[list[Any]]:
    """`[[dtype, ndim], ...]` for the exercise's arguments (ndim 0: a scalar)."""
    return [[a.dtype, 0 if a.role == "scalar" else len(a.shape)] for a in args]


SERVERS = ("numba_ptx", "triton_ptx")


COMPILE_NICE = 10  # how much lower than its job's measuring process a compiler runs


def _below_the_timer() -> None:
    """In the forked server, before exec: a lower CPU priority than every measuring process.

    Under a class's load the host's cores are all busy, and most of that work is compiling (a cold Numba
    compile is 1 to 3 CPU seconds); the process holding the GPU's timing lock competed with it as an
    equal and took three times as long on its host steps (run 21). Compiles now yield to it.
    """
    os.nice(COMPILE_NICE)


class CompileServer:
    """One warm `numba_ptx --serve` (or `triton_ptx --serve`) process, for one learner's file."""

    def __init__(self, module: str = "numba_ptx") -> None:
        if module not in SERVERS:
            raise ValueError(f"no compile server {module!r}")
        request_r, request_w = os.pipe()
        self._request_w: int | None = request_w
        read_fd, write_fd = os.pipe()
        env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "TRITON_INTERPRET")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"gpu_worker.backends.{module}", "--serve", str(request_r), str(write_fd)],
            pass_fds=(request_r, write_fd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # a kernel file prints nothing at import (module rules); kernels print later
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=_below_the_timer,
        )
        os.close(request_r)
        os.close(write_fd)
        self._chunks: list[bytes] = []
        self._overflow = False
        self._reader = threading.Thread(target=self._read, args=(read_fd,), daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        size = 0
        with os.fdopen(fd, "rb") as pipe:
            while chunk := pipe.read(1 << 16):
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    self._overflow = True
                    break
                self._chunks.append(chunk)

    def compile(
        self,
        source: Path,
        entry: str,
        args: list[ArgSpec],
        cc: tuple[int, int],
        triton: dict[str, Any] | None = None,
        *,
        listing: bool = True,
    ) -> None:
        """Send the one request; the server switches to this process's uid before it reads `source`.

        `triton` is the exercise's Triton launch (constexprs, num_warps, num_stages) for a Triton server;
        `listing=False` asks a Numba server for no SASS (the simulator path disassembles the cubin later).
        """
        request: dict[str, Any] = {"source": str(source), "entry": entry, "types": types_spec(args), "cc": list(cc)}
        if triton is not None:
            request["triton"] = triton
        if not listing:
            request["listing"] = False
        request["drop_uid"] = os.getuid()
        request["unchecked"] = os.environ.get(UNCHECKED_ENV) == "1"  # the engine's choice, passed on
        fd, self._request_w = self._request_w, None
        if fd is None:
            raise RuntimeError("a compile server takes one request")
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(json.dumps(request).encode())

    def result(self, timeout: float | None = None) -> dict[str, Any]:
        """The server's answer; `{"ok": False, "kind": "no_answer"}` when it ended without a valid one.

        A server that dies without answering, or answers something malformed, may have run the learner's
        code (Numba once eval()ed string signatures at import): that is never a reason to go on without
        the compiler's word, so `learner_error` makes it the learner's compile error.

        The answer is whole when the server closes its end of the pipe; its exit is not waited for
        (a Numba process takes 0.6 s to tear itself down): the caller's `stop` kills it.
        """
        self._reader.join(timeout=timeout)
        if self._reader.is_alive():
            self.stop()
            return {"ok": False, "kind": "timeout", "message": f"compiling took longer than {timeout:g} s"}
        if self._overflow:
            return {"ok": False, "kind": "too_big", "message": "the compiled kernel is too large to handle"}
        try:
            answer = json.loads(b"".join(self._chunks))
        except ValueError:
            answer = None
        if not valid_answer(answer):
            code = self.proc.poll()
            ended = "without an answer" if answer is None else "with a malformed answer"
            return {"ok": False, "kind": "no_answer", "message": f"the compiler ended {ended} (exit status {code})"}
        return answer

    def stop(self) -> None:
        """Kill the server and anything it started; idempotent.

        A spare's server starts as root and switches to the job's uid only once it has read its request,
        so a job that has already dropped its own privileges may not signal it yet: then the request pipe
        is closed (a server still waiting reads nothing and ends) and it is waited for; by the time it
        could run anything of the learner's it has switched and can be killed.
        """
        fd, self._request_w = self._request_w, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        while self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                break
            except PermissionError:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=0.05)
                continue
            break
        self.proc.wait()

    def abandon(self) -> None:
        """Let a server that never had a request go, without waiting for it to end.

        It never read a learner's file, so nothing of theirs runs in it: its request pipe closed, it reads
        nothing and ends by itself, and the sandbox's teardown (the PID namespace's end, the cgroup's kill)
        reaps what is left. Waiting, as `stop` must for a server that compiled, held a CUDA C++ job's end on
        the CPU tier by about a second: a spare's server, still root, cannot be signalled by the job's uid,
        so `stop` waited for Numba's import and teardown.
        """
        fd, self._request_w = self._request_w, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)


ANSWER_KINDS = frozenset({"compile_error", "import", "unavailable", "timeout", "too_big"})


def valid_answer(answer: Any) -> bool:
    """Whether a server's answer has the shape `numba_ptx` and `triton_ptx` write (see their docstrings)."""
    if not isinstance(answer, dict):
        return False
    if answer.get("ok") is not True:
        return answer.get("ok") is False and answer.get("kind") in ANSWER_KINDS
    if not isinstance(answer.get("ptx"), str) or not answer["ptx"]:
        return False
    try:
        CompileInfo.model_validate(answer.get("info"))
    except ValidationError:
        return False
    return True


_spare: CompileServer | None = None  # started by a spare during its warm-up, for its one job


def start_spare() -> None:
    """Start this process's compile server now, warm, before any learner's code exists (a spare's warm-up)."""
    global _spare
    _spare = CompileServer()


def take(module: str = "numba_ptx") -> CompileServer:
    """The spare's warm server if there is one of that kind, else a fresh one (a cold start)."""
    if module != "numba_ptx":
        discard_spare()
        return CompileServer(module)
    global _spare
    server, _spare = _spare, None
    return server or CompileServer()


def discard_spare() -> None:
    """Let go of a spare server this job did not need (a CUDA C++ job), without waiting for it."""
    global _spare
    server, _spare = _spare, None
    if server is not None:
        server.abandon()


def compile_answer(
    module: str,
    source: Path,
    entry: str,
    args: list[ArgSpec],
    cc: tuple[int, int],
    *,
    timeout: float,
    tool: str,
    arch: str,
    triton: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Compile in a server of kind `module` (the spare's when it is one) and return its good answer.

    Raises the learner's LearnerError for their failures and RuntimeError for ours; the server is
    stopped either way, so nothing the learner's module started outlives the compile.
    """
    server = take(module)
    try:
        server.compile(source, entry, args, cc, triton)
        found = server.result(timeout=timeout)
    finally:
        server.stop()
    if not found.get("ok"):
        err = learner_error(found, str((found.get("info") or {}).get("tool") or tool), arch)
        if err is None:
            raise RuntimeError(f"the {tool} compiler failed: {found.get('message', '')}"[:1000])
        raise err
    return found


def located(diagnostic: Diagnostic) -> str:
    return f"line {diagnostic.line}: {diagnostic.message}" if diagnostic.line else diagnostic.message


def learner_error(found: dict[str, Any], tool: str, arch: str) -> LearnerError | None:
    """The learner's verdict for a failed compile answer; None when the failure is not theirs."""
    kind = found.get("kind")
    if kind == "compile_error":
        diagnostic = Diagnostic.model_validate(found["diagnostic"])
        info = CompileInfo(tool=tool, arch=arch, diagnostics=[diagnostic])
        return LearnerError("compile_error", located(diagnostic), [diagnostic], info)
    if kind == "import" and isinstance(found.get("error"), dict):
        error = found["error"]
        diagnostic = Diagnostic.model_validate(error["diagnostic"])
        verdict = error.get("verdict", "compile_error")
        if verdict not in ("compile_error", "runtime_error", "rejected"):
            verdict = "compile_error"
        compiled = CompileInfo(tool=tool, arch=arch, diagnostics=[diagnostic]) if verdict == "compile_error" else None
        return LearnerError(verdict, located(diagnostic), [diagnostic], compiled)
    if kind == "no_answer":
        message = (
            f"{found.get('message', 'the compiler ended without an answer')}: nothing of your kernel runs "
            "without the compiler's word. Check that your module level holds only imports, constants and "
            "kernels, and that @cuda.jit takes no string signature"
        )
        diagnostic = Diagnostic(message=message)
        return LearnerError(
            "compile_error", message, [diagnostic], CompileInfo(tool=tool, arch=arch, diagnostics=[diagnostic])
        )
    if kind == "timeout":
        return LearnerError("runtime_error", str(found.get("message", "compiling took too long")))
    if kind == "too_big":
        return LearnerError("rejected", str(found.get("message")))
    return None
