"""Compile many Numba sources to PTX in one process of their own (numba-cuda's real compiler, no GPU).

    python numba_batch.py < [[path, entry, types_spec], ...]   ->   [{"ok", "ptx", "symbol", ...}, ...]

The tests' process may have Numba's simulator loaded (it replaces `numba.cuda` for a whole process),
so the compiles run here, through the engine's own `numba_ptx.analyse`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from gpu_worker.backends import numba_ptx  # noqa: E402


def main() -> None:
    answers = []
    for path, entry, types in json.load(sys.stdin):
        found = numba_ptx.analyse(Path(path), entry, types, listing=False)
        answers.append({k: found.get(k) for k in ("ok", "ptx", "symbol", "kind", "message")})
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
