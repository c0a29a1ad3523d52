"""The fleet page: every execution worker's heartbeat, for staff; admins drain and undrain a worker there."""

import redis
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from labs.fleet import drain, heartbeats
from labs.views.fleet_plan import require_fleet_admin


@login_required
def fleet_page(request: HttpRequest) -> HttpResponse:
    """The live workers, their state and their measured ceilings; a student gets 403. POST: drain or undrain."""
    if not request.user.is_staff:
        raise PermissionDenied("The fleet page is for staff.")
    if request.method == "POST":
        require_fleet_admin(request)
        _drain_or_undrain(request, request.POST.get("action", ""), request.POST.get("worker", ""))
        return redirect("labs:fleet")
    try:
        workers, error = heartbeats.workers(), ""
    except redis.RedisError as exc:  # the page says so rather than failing: the fleet is unknown, not empty
        workers, error = [], f"The broker's Redis did not answer, so the fleet is unknown: {exc}"
    may_drain = request.user.is_superuser or request.user.has_perm("labs.change_slice")
    return render(request, "labs/fleet.html", {"workers": workers, "error": error, "may_drain": may_drain})


def _drain_or_undrain(request: HttpRequest, action: str, worker: str) -> None:
    if action not in ("drain", "undrain"):
        messages.error(request, f"Unknown action {action!r}: drain or undrain.")
        return
    try:
        answer = drain.drain(worker) if action == "drain" else drain.undrain(worker)
    except (drain.DrainError, redis.RedisError) as exc:
        messages.error(request, f"{worker} was not {action}ed: {exc}")
        return
    then = (
        "its job in flight finishes and it takes nothing new; its heartbeat says draining within one beat"
        if action == "drain"
        else "it takes jobs again; its heartbeat says serving within one beat"
    )
    messages.success(request, f"{answer.worker} answered “{answer.answer}”: {then}.")
