"""Who people are on the site: the three roles (groups) and the demo personas.

The groups carry the permissions (instructors and admins read every run); a course's own roles (student, TA,
instructor) are its memberships (`labs.courses`). Only this module writes the groups and the demo users.
May import: Django's auth models; nothing of `labs`.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission, User

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
