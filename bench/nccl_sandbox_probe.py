"""Whether NCCL works inside a multi-GPU job's sandbox (gpu_worker.isolation.nccl_child), printed as JSON.

    python3 bench/nccl_sandbox_probe.py --gpus 2 --out "$OUT/sandbox-nccl.json"

On a one-GPU machine `--gpus 2` still plans the sandbox as for two (NCCL's
environment, /dev/shm, the thread allowance) while CUDA shows the one GPU
there is, so the all-reduce runs among one rank: it proves the set-up, not
any link.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_worker.isolation.nccl_child import probe  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--size", type=int, default=1 << 26)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    facts = probe(args.gpus, args.size)
    text = json.dumps(facts, indent=1, default=str)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0 if "error" not in facts and not facts.get("wrong") and "n" in facts else 1


if __name__ == "__main__":
    sys.exit(main())
