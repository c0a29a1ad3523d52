"""The Celery service: consume one slice's queue, run each job in the engine, beat, and stay healthy.

Owns the Celery app and its tasks (`service`), the heartbeat published to Redis (`heartbeat`) and
the preflight that keeps an unhealthy slice out of service (`preflight`). Imports Celery; nothing
below it does.

May import: everything in `gpu_worker` but `cli`.
"""
