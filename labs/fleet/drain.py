"""Draining a live worker: it finishes the job in flight and starts nothing new, until it is undrained.

Sent as Celery's own remote control (`cancel_consumer` / `add_consumer` for the worker's queue, to that worker
alone: its heartbeat's name is its Celery node name); the worker notices its queue gone at its next beat and
says `draining` there (`gpu_worker.worker.heartbeat`). Nothing is stored: the heartbeat is the record.
"""

from __future__ import annotations

from dataclasses import dataclass

from celery import current_app

from labs.fleet import heartbeats

REPLY_SECONDS = 3.0


class DrainError(ValueError):
    """The drain or undrain did not happen: a plain sentence why."""


@dataclass(frozen=True)
class DrainAnswer:
    worker: str
    queue: str
    answer: str  # the worker's own words, e.g. "no longer consuming from 'sim'"


def _live(name: str) -> dict:
    beat = next((b for b in heartbeats.live_beats() if b.get("name") == name), None)
    if beat is None:
        raise DrainError(f"No live worker is called {name!r}: it stopped beating, or never did.")
    return beat


def _ask(command: str, name: str) -> DrainAnswer:
    queue = str(_live(name).get("queue") or "")
    control = current_app.control
    send = control.cancel_consumer if command == "cancel_consumer" else control.add_consumer
    replies = send(queue, destination=[name], reply=True, timeout=REPLY_SECONDS) or []
    answer = next((reply[name] for reply in replies if name in reply), None)
    if answer is None:
        raise DrainError(f"{name} did not answer within {REPLY_SECONDS:.0f} s; nothing was changed there.")
    if "error" in answer:
        raise DrainError(f"{name} refused: {answer['error']}")
    return DrainAnswer(name, queue, str(answer.get("ok", "")))


def drain(name: str) -> DrainAnswer:
    """Stop worker `name` taking new jobs; the one it runs now finishes."""
    return _ask("cancel_consumer", name)


def undrain(name: str) -> DrainAnswer:
    """Let a drained worker take jobs again."""
    return _ask("add_consumer", name)
