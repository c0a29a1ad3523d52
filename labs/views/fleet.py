"""The fleet page: every execution worker's heartbeat, for staff only."""

import redis
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from labs.fleet import heartbeats


@login_required
def fleet_page(request: HttpRequest) -> HttpResponse:
    """The live workers, their state and their measured ceilings; a student gets 403."""
    if not request.user.is_staff:
        raise PermissionDenied("The fleet page is for staff.")
    try:
        workers, error = heartbeats.workers(), ""
    except redis.RedisError as exc:  # the page says so rather than failing: the fleet is unknown, not empty
        workers, error = [], f"The broker's Redis did not answer, so the fleet is unknown: {exc}"
    return render(request, "labs/fleet.html", {"workers": workers, "error": error})
