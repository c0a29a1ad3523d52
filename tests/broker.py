"""What waits on a broker queue, read as a worker would take it: the Celery messages on one Redis list."""

from __future__ import annotations

import base64
import json

import redis


def queued_tasks(broker_url: str, key: str) -> list[tuple[str, list]]:
    """Each task message on the list `key` (the broker's prefix included), oldest first: its name and arguments."""
    with redis.Redis.from_url(broker_url) as client:
        raw = client.lrange(key, 0, -1)
    tasks = []
    for item in reversed(raw):  # kombu pushes on the left and a worker pops on the right
        message = json.loads(item)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        tasks.append((message["headers"]["task"], args))
    return tasks
