"""Who may read a run, its JSON view, and what each viewer may see of it: sandbox and worker internals are for staff.

`can_view` says who may read a submission at all; `submission_state` is the run as the API and the stream's
first message serve it. The stored document stays whole (staff, the fleet page and debugging need it);
the filter (`state_for`, `event_for`) is applied where results and events are served: the JSON API and the
WebSocket stream. Read-only: nothing here writes.
"""

from __future__ import annotations

from typing import Any

from labs.fleet import routing
from labs.models import Membership, Submission
from labs.models.course import Role
from labs.models.run import Status

# `started.sandbox` and `result.sandbox`: the uid, bubblewrap's version, "worker runs as root", limits;
# `started.worker`: the worker's host and pid.
STAFF_ONLY_EVENT_FIELDS = ("sandbox", "worker")
STAFF_ONLY_RESULT_FIELDS = ("sandbox",)


def can_view(user: Any, submission: Submission) -> bool:
    """Only the owner, the staff (TA or instructor) of a course the owner studies in, and admins may read a run.

    Being in the instructors' group is no right to read anyone's runs: only a course makes one staff of a student.
    """
    if not getattr(user, "is_authenticated", False):
        return False
    if submission.owner_id == user.pk or user.has_perm("labs.view_all_submissions"):
        return True
    taught = Membership.objects.filter(user=user, role__in=[Role.TA, Role.INSTRUCTOR]).values("course_id")
    return Membership.objects.filter(user_id=submission.owner_id, role=Role.STUDENT, course_id__in=taught).exists()


def sees_internals(user: Any) -> bool:
    """Staff accounts (instructors) and admins see the worker's internals, of the runs they may read; students and
    TAs do not."""
    if not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_staff or user.has_perm("labs.view_all_submissions"))


def event_for(event: dict[str, Any], staff: bool) -> dict[str, Any]:
    """One event as this viewer may see it (a copy when anything is left out)."""
    if staff or not any(k in event for k in STAFF_ONLY_EVENT_FIELDS):
        return event
    return {k: v for k, v in event.items() if k not in STAFF_ONLY_EVENT_FIELDS}


def state_for(state: dict[str, Any], staff: bool) -> dict[str, Any]:
    """A `submission_state` document as this viewer may see it."""
    if staff:
        return state
    shown = dict(state)
    if isinstance(shown.get("result"), dict):
        shown["result"] = {k: v for k, v in shown["result"].items() if k not in STAFF_ONLY_RESULT_FIELDS}
    if isinstance(shown.get("events"), list):
        shown["events"] = [event_for(e, staff) if isinstance(e, dict) else e for e in shown["events"]]
    return shown


def submission_state(submission: Submission, with_events: bool = True) -> dict:
    """The JSON view of a submission, for the API and the stream's first message."""
    state = {
        "id": str(submission.public_id),  # what URLs name it by: random, so no one reaches a run by counting
        "number": submission.pk,  # what pages call it ("#12"), also on the staff's pages
        "exercise": submission.exercise.slug,
        "language": submission.language,
        "status": submission.status,
        "verdict": submission.verdict or None,
        "queue": submission.queue,
        "launch": submission.launch,
        "created_at": submission.created_at.isoformat(),
        "finished_at": submission.finished_at.isoformat() if submission.finished_at else None,
        "url": f"/api/submissions/{submission.public_id}",
        "ws_url": f"/ws/submissions/{submission.public_id}/",
    }
    if submission.status == Status.QUEUED:
        state["place"] = routing.place(submission)
    if with_events:
        state["source"] = submission.source
        state["result"] = submission.result
        state["events"] = [e.payload for e in submission.events.all()]
    return state
