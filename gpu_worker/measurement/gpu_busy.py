"""How busy a GPU is with what only it can do: seconds its timing lock was held, per second of wall time.

The lesson the service must practise is that the expensive resource stays busy. The part of a job that
must have the GPU alone is its timed launches (`gpu_lock`); everything else (compile, inputs, checks,
figures) shares it. So the figure of merit is the timing lock's duty cycle: lock-held seconds per wall
second, over every worker of that GPU together.

Workers of one GPU are separate processes (and a job runs in a pool process, its heartbeat in the main
one), so the ledger is in the broker's Redis: each finished job adds the seconds its sizes held the lock
to a counter for the 10-second bucket it ended in, and any reader sums the buckets of the last minute.
Counters expire by themselves; a job that held the lock across a bucket's edge is counted in the bucket it
ended in, which over a minute's window moves at most one job's hold by ten seconds.
"""

from __future__ import annotations

import re
import time

import redis

BUCKET_SECONDS = 10
WINDOW_SECONDS = 60
KEEP_SECONDS = 5 * 60  # a bucket outlives every window that reads it


def _key(prefix: str, uuid: str, bucket: int) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", uuid)
    return f"{prefix}warplab:gpu-busy:{safe}:{bucket}"


def record(client: redis.Redis, prefix: str, uuid: str, held_seconds: float, now: float | None = None) -> None:
    """Add one job's lock-held seconds to the GPU's ledger (its current bucket)."""
    if held_seconds <= 0:
        return
    bucket = int((time.time() if now is None else now) // BUCKET_SECONDS)
    key = _key(prefix, uuid, bucket)
    with client.pipeline() as pipe:
        pipe.incrbyfloat(key, float(held_seconds))
        pipe.expire(key, KEEP_SECONDS)
        pipe.execute()


def duty_cycle(
    client: redis.Redis, prefix: str, uuid: str, now: float | None = None, window: int = WINDOW_SECONDS
) -> dict[str, float]:
    """The GPU's timing-lock seconds per wall second over the last `window` seconds of whole buckets."""
    last = int((time.time() if now is None else now) // BUCKET_SECONDS) - 1  # the newest bucket that is complete
    count = max(1, window // BUCKET_SECONDS)
    keys = [_key(prefix, uuid, b) for b in range(last - count + 1, last + 1)]
    held = sum(float(v) for v in client.mget(keys) if v is not None)
    span = count * BUCKET_SECONDS
    return {"lock_held_seconds": round(held, 3), "window_seconds": span, "lock_held_per_wall": round(held / span, 4)}
