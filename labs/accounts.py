"""Who people are on the site: the three roles (groups), the demo personas, invitations to set a password,
and how wrong passwords are throttled.

The groups carry the permissions (admins read every run); a course's own roles (student, TA, instructor) are
its memberships (`labs.courses`), and an instructor reads the runs of their own courses' students through them.
Only this module writes the groups and the demo users.
An invitation is Django's own password-reset token (`default_token_generator`): the link works once (setting the
password changes the hash it signs) and expires after `PASSWORD_RESET_TIMEOUT`; its page is Django's
`PasswordResetConfirmView` in the site's style (`labsite/urls.py`).
May import: Django's auth models; nothing of `labs`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.db.models import Sum
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

log = logging.getLogger(__name__)

STUDENTS, INSTRUCTORS, ADMINS = "students", "instructors", "admins"


def ensure_roles() -> dict[str, Group]:
    """The three groups; the admins' reads every run (an instructor's group reads none: their courses decide)."""
    groups = {name: Group.objects.get_or_create(name=name)[0] for name in (STUDENTS, INSTRUCTORS, ADMINS)}
    view_all = Permission.objects.get(codename="view_all_submissions")
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


@dataclass(frozen=True)
class Invitation:
    """A new account's link to set its password, and the address it was mailed to ("" when not mailed)."""

    username: str
    link: str
    mailed_to: str


def invite(users: Iterable[User], absolute: Callable[[str], str], inviter: str = "") -> list[Invitation]:
    """A single-use, expiring link to set a password for each user, mailed to those with an email address.

    `absolute` turns the link's path into a full URL (the request's `build_absolute_uri`). A mail that cannot
    be sent is logged and the link still returned: the instructor sees every link on the page either way.
    """
    invitations = []
    for user in users:
        uid = urlsafe_base64_encode(force_bytes(user.pk))
        path = reverse("invitation", kwargs={"uidb64": uid, "token": default_token_generator.make_token(user)})
        link = absolute(path)
        invitations.append(Invitation(user.username, link, _mail(user, link, inviter)))
    return invitations


def _mail(user: User, link: str, inviter: str) -> str:
    if not user.email:
        return ""
    days = max(1, settings.PASSWORD_RESET_TIMEOUT // 86400)
    by = f" by {inviter}" if inviter else ""
    body = (
        f"You have been enrolled in WarpLab{by} as {user.username}.\n\n"
        f"Choose your password here (the link works once and expires in {days} days):\n{link}\n"
    )
    try:
        send_mail("Your WarpLab account", body, None, [user.email])
    except OSError:  # SMTP errors are OSErrors; the roster is enrolled and the link shown regardless
        log.warning("could not mail the invitation of %s", user.username, exc_info=True)
        return ""
    return user.email


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
