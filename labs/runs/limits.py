"""Abuse limits on submitting runs, exact under concurrency: one learner can never starve the others.

- a per-learner rate over a sliding minute, kept in Redis by one Lua script (trim, count,
  add: atomic, so 50 concurrent posts against a limit of 20 let exactly 20 through);
- at most `WARPLAB_RUNS_IN_FLIGHT` queued or running runs per learner (1 by default, 0 for no
  limit), checked and saved under a per-learner Redis lock so two posts cannot both see none;
- a global cap on queued runs (`WARPLAB_QUEUE_CAP`), answered with 503.

Every refusal is `services.SubmissionRejected`'s shape: a plain message and a status.
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Iterator
from typing import Any

import redis
from django.conf import settings

# KEYS[1]: the learner's window; ARGV: window (s), limit, a unique member. Redis's own clock, so every
# web process agrees on what "the last minute" is.
_SLIDING_WINDOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(window) + 1)
return 1
"""


class LimitReached(Exception):
    """A limit refused the run: a plain message and the HTTP status to answer with."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.message, self.status = message, status


@functools.lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=5)


def _redis() -> redis.Redis:
    return _client(settings.REDIS_URL)


def _account_key(kind: str, user: Any) -> str:
    # The account's creation instant beside its id: an id reused after a delete starts from nothing.
    joined = user.date_joined.timestamp() if getattr(user, "date_joined", None) else 0
    return f"{settings.CHANNELS_PREFIX}:warplab:{kind}:{user.pk}-{joined:.6f}"


def _unavailable(exc: redis.RedisError) -> LimitReached:
    return LimitReached(f"The lab cannot take runs right now (its Redis did not answer: {exc}).", 503)


def take_run_slot(user: Any) -> None:
    """Count one run against the learner's per-minute rate, or refuse it (429) when the minute is full."""
    limit = int(settings.WARPLAB_RUNS_PER_MINUTE)
    if limit <= 0:
        return
    try:
        allowed = _redis().eval(_SLIDING_WINDOW, 1, _account_key("rate", user), 60, limit, uuid.uuid4().hex)
    except redis.RedisError as exc:
        raise _unavailable(exc) from exc
    if not allowed:
        raise LimitReached(
            f"Too many runs in the last minute (the limit is {limit}); wait a little and try again.", 429
        )


def check_queue_cap(queued: int) -> None:
    """Refuse (503) when `queued` runs already wait across the whole lab."""
    cap = int(settings.WARPLAB_QUEUE_CAP)
    if cap > 0 and queued >= cap:
        raise LimitReached(
            f"The lab is full: {queued} runs are waiting for a worker. Please try again in a minute.", 503
        )


def check_in_flight(in_flight: int) -> None:
    """Refuse (429) a learner who already has the allowed number of runs queued or running."""
    allowed = int(settings.WARPLAB_RUNS_IN_FLIGHT)
    if allowed > 0 and in_flight >= allowed:
        runs = "run is" if allowed == 1 else f"{allowed} runs are"
        raise LimitReached(
            f"Your earlier {runs} still queued or running; wait for its verdict, then submit again.", 429
        )


@contextlib.contextmanager
def learner_lock(user: Any) -> Iterator[None]:
    """Hold the learner's submit lock while the in-flight count is read and the run saved (no lock: no limit)."""
    if int(settings.WARPLAB_RUNS_IN_FLIGHT) <= 0:
        yield
        return
    lock = _redis().lock(_account_key("submit-lock", user), timeout=30, blocking_timeout=15)
    try:
        acquired = lock.acquire()
    except redis.RedisError as exc:
        raise _unavailable(exc) from exc
    if not acquired:
        raise LimitReached("Your other runs are still being saved; try again in a moment.", 429)
    try:
        yield
    finally:
        with contextlib.suppress(redis.RedisError):
            lock.release()
