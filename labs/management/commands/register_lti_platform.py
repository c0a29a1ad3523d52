"""`manage.py register_lti_platform`: register this tool on an LMS (Canvas, Moodle) and print the tool's URLs."""

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from labs.courses import lti
from labs.courses.services import CourseInputError


class Command(BaseCommand):
    help = "Register an LTI 1.3 platform (the LMS's issuer, client id, endpoints and deployment ids)."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--issuer", required=True)
        parser.add_argument("--client-id", required=True)
        parser.add_argument("--auth-login-url", required=True, help="the LMS's OIDC authorisation endpoint")
        parser.add_argument("--auth-token-url", required=True, help="the LMS's OAuth 2 token endpoint")
        parser.add_argument("--key-set-url", required=True, help="the LMS's JWKS")
        parser.add_argument("--deployment-id", action="append", required=True)
        parser.add_argument("--as-admin", default="admin", help="the admin account recorded as registering it")

    def handle(self, *args, **o):
        admin = User.objects.filter(username=o["as_admin"], is_superuser=True).first()
        if admin is None:
            raise CommandError(f"no admin called {o['as_admin']!r}")
        try:
            platform = lti.register_platform(
                admin,
                name=o["name"],
                issuer=o["issuer"],
                client_id=o["client_id"],
                auth_login_url=o["auth_login_url"],
                auth_token_url=o["auth_token_url"],
                key_set_url=o["key_set_url"],
                deployment_ids=o["deployment_id"],
            )
        except CourseInputError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"registered {platform.name}; give the LMS: login /lti/login/, launch /lti/launch/, keys /lti/jwks/"
        )
