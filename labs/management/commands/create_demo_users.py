"""`manage.py create_demo_users`: the demo personas student, ta, instructor and admin, and the demo course."""

import secrets

from django.conf import settings
from django.core.management.base import BaseCommand

from labs import accounts
from labs.courses import services


class Command(BaseCommand):
    help = "Create (or reset) the demo accounts and print their password."

    def add_arguments(self, parser):
        parser.add_argument("--password", help="default: LAB_DEMO_PASSWORD, else a random one")

    def handle(self, *args, password=None, **options):
        password = password or settings.LAB_DEMO_PASSWORD or secrets.token_urlsafe(9)
        users = accounts.ensure_demo_users(password)
        by_name = {u.get_username(): u for u in users}
        course = services.ensure_demo_course(by_name["instructor"], by_name["ta"], by_name["student"])
        names = ", ".join(u.get_username() for u in users)
        self.stdout.write(f"demo accounts: {names}; password: {password}; demo course: /courses/{course.slug}/")
