"""`python -m gpu_worker occupancy`: the occupancy calculator over JSON lines, no GPU needed.

Each line on stdin is one configuration,
`{"arch": "sm_90", "threads_per_block": 256, "registers_per_thread": 32, "static_shared_bytes": 0,
"dynamic_shared_bytes": 0}` (optionally also `max_dynamic_shared_bytes`, `carveout`,
`max_threads_per_block`, `block_barriers`, `sgprs_per_wave`), and each gets one line on stdout
with `active_blocks_per_sm`, `active_warps_per_sm`, `occupancy` (0 to 1), `limited_by` and the
`reason` in words. A line that cannot be read gets `{"error": ...}` and the rest carry on; the
exit status is 0. `--full` writes the whole result, `--arch` names the arch lines leave out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import IO, Any

from gpu_worker.science.archs import SUPPORTED_ARCHES
from gpu_worker.science.occupancy import occupancy

REQUIRED = ("arch", "threads_per_block", "registers_per_thread")
OPTIONAL = (
    "static_shared_bytes",
    "dynamic_shared_bytes",
    "max_dynamic_shared_bytes",
    "carveout",
    "max_threads_per_block",
    "block_barriers",
    "sgprs_per_wave",
)
BRIEF = (
    "arch",
    "active_blocks_per_sm",
    "active_warps_per_sm",
    "max_warps_per_sm",
    "occupancy",
    "limited_by",
    "launchable",
    "what_if",
    "reason",
)


def answer(line: str, default_arch: str | None = None, full: bool = False) -> dict[str, Any]:
    """The JSON object one input line gets: the result, or {"error": ...}."""
    try:
        request = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"error": f"not JSON: {exc.msg} at column {exc.colno}"}
    if not isinstance(request, dict):
        return {"error": "each line must be a JSON object"}
    if default_arch and "arch" not in request:
        request["arch"] = default_arch
    missing = [k for k in REQUIRED if k not in request]
    unknown = sorted(set(request) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unknown field {', '.join(unknown)}"] if unknown else []
        )
        return {"error": "; ".join(parts), "input": request}
    if not isinstance(request["arch"], str):
        return {"error": 'arch must be a string such as "sm_90"', "input": request}
    try:
        result = occupancy(
            request.pop("arch"), request.pop("threads_per_block"), request.pop("registers_per_thread"), **request
        )
    except (ValueError, TypeError) as exc:
        return {"error": str(exc)}
    data = result.model_dump()
    return data if full else {k: data[k] for k in BRIEF}


def run(stdin: IO[str], stdout: IO[str], default_arch: str | None = None, full: bool = False) -> int:
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(json.dumps(answer(line, default_arch, full)) + "\n")
        stdout.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpu_worker occupancy",
        description="Occupancy of kernel launch configurations, one JSON object per line in and out.",
        epilog=f"architectures: {', '.join(SUPPORTED_ARCHES)} (AMD ones are what-ifs from LLVM's rules)",
    )
    parser.add_argument("--arch", help="the arch of lines that name none")
    parser.add_argument("--full", action="store_true", help="write every field of the result, limits and notes too")
    args = parser.parse_args(argv)
    return run(sys.stdin, sys.stdout, args.arch, args.full)


if __name__ == "__main__":
    raise SystemExit(main())
