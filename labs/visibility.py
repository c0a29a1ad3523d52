"""What each viewer may see of a run: sandbox and worker internals are for staff only.

The stored document stays whole (staff, the fleet page and debugging need it); the filter is
applied where results and events are served: the JSON API and the WebSocket stream.
"""

from __future__ import annotations

from typing import Any

# `started.sandbox` and `result.sandbox`: the uid, bubblewrap's version, "worker runs as root", limits;
# `started.worker`: the worker's host and pid.
STAFF_ONLY_EVENT_FIELDS = ("sandbox", "worker")
STAFF_ONLY_RESULT_FIELDS = ("sandbox",)


def sees_internals(user: Any) -> bool:
    """Instructors, TAs with the permission, and admins see the worker's internals; students do not."""
    if not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_staff or user.has_perm("labs.view_all_submissions"))


def event_for(event: dict[str, Any], staff: bool) -> dict[str, Any]:
    """One event as this viewer may see it (a copy when anything is left out)."""
    if staff or not any(k in event for k in STAFF_ONLY_EVENT_FIELDS):
        return event
    return {k: v for k, v in event.items() if k not in STAFF_ONLY_EVENT_FIELDS}


def state_for(state: dict[str, Any], staff: bool) -> dict[str, Any]:
    """A `services.submission_state` document as this viewer may see it."""
    if staff:
        return state
    shown = dict(state)
    if isinstance(shown.get("result"), dict):
        shown["result"] = {k: v for k, v in shown["result"].items() if k not in STAFF_ONLY_RESULT_FIELDS}
    if isinstance(shown.get("events"), list):
        shown["events"] = [event_for(e, staff) if isinstance(e, dict) else e for e in shown["events"]]
    return shown
