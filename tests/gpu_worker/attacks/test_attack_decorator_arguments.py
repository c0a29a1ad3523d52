"""Issue 27, item 1: Numba eval()s a string signature in the compile process; nothing it does reaches a result.

The attack: `@cuda.jit("(__import__('os')._exit(0), ...)[1]")`. The compile process
ran the string and exited without an answer; the simulator carried on and ran
the kernel's body as untyped Python in the child, which rewrote the `outputs`
and `memory` messages on their way out (a kernel that writes nothing was
accepted). The module rules now refuse the string; behind them, a compile
process that ends without a valid answer is the learner's compile error, and
the compiler facts on the sim backend are the engine's own ptxas run.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from engine_factories import alices_job, run

from gpu_worker.backends import ptxas

EXITS_THE_COMPILER = "(__import__('os')._exit(0), void(float32[:], float32[:], float32[:]))[1]"
# A kernel that writes nothing: its body, run as Python by the simulator, forges the child's messages.
FORGES_ITS_MESSAGES = f"""from numba import cuda


@cuda.jit({EXITS_THE_COMPILER!r})
def vector_add(a, b, c):
    if cuda.grid(1) == 0:
        np = __import__("numpy")
        wire = __import__("gpu_worker.isolation.wire", fromlist=["MessageWriter"])
        total = np.asarray(a) + np.asarray(b)
        send = wire.MessageWriter.send

        def forged(self, message, arrays=None):
            if message.get("type") == "outputs":
                arrays = {{"c": total}}
            if message.get("type") == "memory":
                message = {{**message, "memory": {{**message["memory"], "forged": True}}}}
            return send(self, message, arrays)

        wire.MessageWriter.send = forged
"""
TRIVIAL_PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry vector_add(.param .u64 a, .param .u64 b, .param .u64 c)
{
    ret;
}
"""
FORGED_INFO = {"tool": "FORGED compiler", "registers": 200, "shared_bytes": 7, "spill_bytes": 0, "local_bytes": 0}


def _answers_for_the_compiler(answer: dict[str, object]) -> str:
    """A module whose string signature writes `answer` on the compile server's answer pipe, then exits."""
    payload = json.dumps(answer).encode()
    signature = f"(__import__('os').write(int(__import__('sys').argv[3]), {payload!r}), __import__('os')._exit(0))"
    return f"""from numba import cuda


@cuda.jit({signature!r})
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


def _kinds(events: list) -> list[str]:
    return [e.type for e in events]


def test_a_string_signature_is_a_compile_error_on_the_decorators_line() -> None:
    done = run(alices_job(FORGES_ITS_MESSAGES), module_rules=True)
    assert done.result.verdict == "compile_error"
    first = done.result.compile.diagnostics[0]
    assert first.line == 4 and "string signature" in first.message
    assert "check" not in _kinds(done.events) and done.result.memory is None


def test_a_compiler_that_ends_without_an_answer_runs_nothing_and_forges_nothing() -> None:
    done = run(alices_job(FORGES_ITS_MESSAGES), module_rules=False)  # the string reaches Numba's eval()
    assert done.result.verdict == "compile_error", done.result.message
    assert "ended without an answer" in done.result.message
    assert "check" not in _kinds(done.events) and "memory" not in _kinds(done.events)
    assert done.result.memory is None and "forged" not in done.json()


def test_a_forged_answer_without_ptx_is_a_compile_error() -> None:
    source = _answers_for_the_compiler({"ok": True, "info": FORGED_INFO})
    done = run(alices_job(source), module_rules=False)
    assert done.result.verdict == "compile_error" and "malformed answer" in done.result.message
    assert "FORGED" not in done.json()


def test_forged_compiler_facts_give_way_to_the_engines_ptxas() -> None:
    source = _answers_for_the_compiler({"ok": True, "info": FORGED_INFO, "ptx": TRIVIAL_PTX, "symbol": "vector_add"})
    done = run(alices_job(source), module_rules=False)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trivial.ptx"
        path.write_text(TRIVIAL_PTX)
        stats, _ = ptxas.assemble(path)
    compiled = done.result.compile
    assert compiled is not None and "FORGED" not in compiled.tool and "run by the engine" in compiled.tool
    assert compiled.registers == stats["vector_add"].registers != FORGED_INFO["registers"]
    assert compiled.shared_bytes == 0
    assert "FORGED" not in done.json() and "200 registers" not in done.json()
