"""Who people are on the site: the three roles (groups), the demo personas, and how wrong passwords are throttled.

The groups carry the permissions (instructors and admins read every run); a course's own roles (student, TA,
instructor) are its memberships (`labs.courses`). Only this module writes the groups and the demo users.
May import: Django's auth models; nothing of `labs`.
"""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.db.models import Sum

STUDENTS, INSTRUCTORS, ADMINS = "students", "instructors", "admins"


def ensure_roles() -> dict[str, Group]:
    """The three groups, with the instructors' and admins' permissions."""
    groups = {name: Group.objects.get_or_create(name=name)[0] for name in (STUDENTS, INSTRUCTORS, ADMINS)}
    view_all = Permission.objects.get(codename="view_all_submissions")
    groups[INSTRUCTORS].permissions.add(view_all)
    groups[ADMINS].permissions.add(view_all)
    return groups


def ensure_demo_users(password: str) -> list[User]:
    """Demo personas `student`, `ta` (a teaching assistant, in the demo course), `instructor` and `admin`."""
    groups = ensure_roles()
    users = []
    for username, group in (("student", STUDENTS), ("ta", STUDENTS), ("instructor", INSTRUCTORS), ("admin", ADMINS)):
        user, _ = User.objects.get_or_create(username=username)
        user.is_staff = username in ("instructor", "admin")
        user.is_superuser = username == "admin"
        user.set_password(password)
        user.save()
        user.groups.add(groups[group])
        users.append(user)
    return users


class LoginThrottle(AxesDatabaseHandler):
    """django-axes' database handler with a failure limit per username and a higher one per client address.

    `AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], ["ip_address"]]` counts both, but axes holds every
    count to the one `AXES_FAILURE_LIMIT`: a class behind one NAT would share a student's five. So the address's
    count is put on the user's scale (`WARPLAB_LOGIN_FAILURES_PER_ADDRESS` failures from one address read as
    `AXES_FAILURE_LIMIT`), and a good login clears only that user's failures from that address, never the whole
    address's: an attacker who owns one account cannot wipe the count of the passwords they tried on others.
    """

    def get_failures(self, request, credentials: dict | None = None) -> int:
        per_user, per_address = (
            attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        )
        # floor(n * user_limit / address_limit) reaches user_limit exactly when n reaches address_limit
        on_user_scale = per_address * settings.AXES_FAILURE_LIMIT // settings.WARPLAB_LOGIN_FAILURES_PER_ADDRESS
        return max(per_user, on_user_scale)

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        username = get_client_username(request, credentials)
        deleted, _ = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address).delete()
        return deleted
