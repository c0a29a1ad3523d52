"""Factories for the personas and the lab content: alice the student, ian the instructor, ada the admin."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from labs import services

PASSWORD = "correct-horse-battery"


def make_student(username: str = "alice") -> User:
    user = User.objects.create_user(username, password=PASSWORD)
    user.groups.add(services.ensure_roles()[services.STUDENTS])
    return user


def make_instructor(username: str = "ian") -> User:
    user = User.objects.create_user(username, password=PASSWORD, is_staff=True)
    user.groups.add(services.ensure_roles()[services.INSTRUCTORS])
    return user


def make_admin(username: str = "ada") -> User:
    return User.objects.create_superuser(username, password=PASSWORD)


def client_for(user: User) -> Client:
    """A test client logged in as `user`."""
    client = Client()
    client.force_login(user)
    return client
