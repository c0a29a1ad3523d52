"""The execution fleet as its workers' heartbeats say, read from the broker's Redis.

The document's shape and states are the contract's (`gpu_worker.protocol.heartbeat_document`); the
worker writes it (`gpu_worker.worker.heartbeat`), and nothing of the worker's Celery side is imported here.
Each worker writes `<broker prefix>warplab:worker:<name>` as JSON and renews it;
a key that stopped being renewed has expired, so what is found is what is alive.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from typing import Any

import redis
from django.conf import settings
from django.utils import timezone

from gpu_worker.measurement.calibrate import CEILING_INFO
from gpu_worker.protocol import CALIBRATING, DRAINING, OUT_OF_SERVICE, SERVING, STARTING, heartbeat_key


def key_pattern() -> str:
    """The SCAN pattern of this site's heartbeat keys, the broker prefix taken literally."""
    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("global_keyprefix", "")
    return heartbeat_key(re.sub(r"([*?\[\]\\])", r"\\\1", prefix), "*")


def _ceiling_rows(beat: dict[str, Any]) -> list[dict[str, Any]]:
    ceilings, anchors = beat.get("ceilings") or {}, beat.get("anchors") or {}
    rows = []
    for c in CEILING_INFO:
        value = ceilings.get(c.key)
        if value is None:
            continue
        anchor = anchors.get(c.key)
        percent = round(100 * value / anchor) if anchor else None
        shown = f"{value / c.scale:.3g}"
        rows.append({"key": c.key, "label": c.label, "unit": c.unit, "value": shown, "percent": percent})
    return rows


def _parsed(raw: bytes | None) -> dict[str, Any] | None:
    try:
        beat = json.loads(raw) if raw else None
    except ValueError:
        return None
    return beat if isinstance(beat, dict) else None


def _age_seconds(updated_at: Any, now: dt.datetime) -> float | None:
    try:
        return max(0.0, (now - dt.datetime.fromisoformat(str(updated_at))).total_seconds())
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=4)
def _broker(url: str) -> redis.Redis:
    """One client (and its connection pool) per broker URL: every submit asks the fleet, so none opens its own."""
    return redis.Redis.from_url(url, socket_timeout=5)


def _live_beats(client: redis.Redis | None) -> list[dict[str, Any]]:
    """Every live worker's heartbeat document, as written (a key that expired or is not JSON is skipped)."""
    client = client or _broker(settings.CELERY_BROKER_URL)
    keys = list(client.scan_iter(match=key_pattern(), count=200))
    # a key that expired between SCAN and MGET reads None, one that is not a heartbeat fails to parse
    return [beat for beat in map(_parsed, client.mget(keys) if keys else []) if beat is not None]


def workers(client: redis.Redis | None = None) -> list[dict[str, Any]]:
    """Every live worker's heartbeat, with its shown ceilings and how old the last beat is, by queue and name."""
    now = timezone.now()
    found = _live_beats(client)
    for beat in found:
        beat["state_words"] = str(beat.get("state") or "unknown").replace("_", " ")
        beat["ceiling_rows"] = _ceiling_rows(beat)
        beat["age_seconds"] = _age_seconds(beat.get("updated_at"), now)
    return sorted(found, key=lambda beat: (str(beat.get("queue")), str(beat.get("name"))))


def queue_notice(queue: str, client: redis.Redis | None = None) -> str:
    """What a learner is told on submitting to `queue` when no live worker serves it; '' when one does.

    A fleet that cannot be read says nothing: the run is queued as always, and the queue keeps it.
    """
    try:
        beats = [beat for beat in _live_beats(client) if beat.get("queue") == queue]
    except redis.RedisError:
        return ""
    states = {beat.get("state") for beat in beats}
    waits = "Your run waits in the queue and starts when a worker takes it."
    if SERVING in states:
        return ""
    if DRAINING in states:
        return f"The worker for {queue} is being drained by an admin: it takes no new run for now. {waits}"
    if states & {STARTING, CALIBRATING}:
        return f"The worker for {queue} is measuring its GPU before it serves (under a minute). {waits}"
    sick = [beat for beat in beats if beat.get("state") == OUT_OF_SERVICE]
    if sick:
        why = "; ".join(str(p) for beat in sick for p in beat.get("problems") or []) or "no reason given"
        return f"No worker serves {queue} right now: its GPU is out of service ({why}). {waits}"
    return f"No worker is serving {queue} right now. {waits}"


def queue_lengths(queues: list[str], client: redis.Redis | None = None) -> dict[str, int]:
    """Jobs waiting in each Celery queue: the broker's list `<prefix><queue>` (kombu's Redis transport)."""
    client = client or _broker(settings.CELERY_BROKER_URL)
    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("global_keyprefix", "")
    with client.pipeline(transaction=False) as pipe:
        for queue in queues:
            pipe.llen(f"{prefix}{queue}")
        return {q: int(n) for q, n in zip(queues, pipe.execute(), strict=True)}


def live_beats() -> list[dict[str, Any]]:
    """Every live worker's heartbeat document as written (for the dashboard and routing)."""
    return _live_beats(None)
