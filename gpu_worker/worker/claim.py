"""A delivery's claim on the job ledger, asked before the job starts and answered while it runs.

The worker asked the web side's ledger (`labs.claim_run`) and waited for the answer before it started the job:
the claim's round trip through the web queue (0.12 s p50, 0.54 s p95 under 8 learners, run 30 on an H100)
stood in front of every job's first figure and verdict, with the GPU and the spare sandbox idle meanwhile.
Now a first delivery's job starts at once and the answer is waited for on a thread of its own: the worker's
`_Reporter` holds every event back until the ledger granted the attempt (whose number fences each report),
and drops them all if it refused. A refused delivery (its run finished, or held by another delivery) stops at
its next event; one the ledger never answered goes back to the queue once it has ended, as before.

A delivery the broker gives again (`redelivered`: its worker died or the broker restored it) still waits for
its claim before it starts: a job that kills its worker would otherwise be run once more before the ledger
could say its attempts are spent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
Answer = dict[str, Any]


class PendingClaim:
    """The ledger's answer for one delivery, waited for on a thread; `on_answer(self)` is told once it is in.

    `ask()` sends the claim and blocks for its answer (raising if none comes in time); it runs on the thread.
    `answer` is the ledger's dict, or None with `error` saying why none came.
    """

    def __init__(self, ask: Callable[[], Answer], on_answer: Callable[[PendingClaim], None]):
        self.asked_at = time.time()
        self.answer: Answer | None = None
        self.error = ""
        self.answered_at: float | None = None
        self._ask, self._on_answer = ask, on_answer
        self.thread = threading.Thread(target=self._wait, name="claim", daemon=True)
        self.thread.start()

    def _wait(self) -> None:
        try:
            self.answer = dict(self._ask())
        except Exception as exc:  # the web side, its database or the broker is away
            self.error = f"{type(exc).__name__}: {exc}"
        self.answered_at = time.time()
        try:
            self._on_answer(self)
        except Exception:  # the job's reporter then waits out the claim's time and drops what it holds
            log.exception("the claim's answer could not be handed on")

    def seconds(self) -> float:
        """How long the answer took (so far, if it has not come)."""
        return (self.answered_at or time.time()) - self.asked_at
