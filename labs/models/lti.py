"""LTI 1.3: the tool's own key pair, the platforms (Canvas, Moodle) registered with this tool, the LMS courses linked
to ours, the resource links launched into our assignments with their grade-service endpoints, and who each LMS
user is here.

Written only by `labs.courses.lti`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class LtiToolKey(models.Model):
    """The tool's RSA key pair, made once before any platform is registered: an LMS admin configuring the tool
    needs its key set (`/lti/jwks/`) before the LMS hands out the client id the tool is then registered with."""

    slot = models.PositiveSmallIntegerField(unique=True, default=1, help_text="One key pair: slot 1")
    private_key = models.TextField(help_text="PEM; never shown")
    public_key = models.TextField(help_text="PEM; served at /lti/jwks/")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"LTI tool key of {self.created_at:%Y-%m-%d}"


class LtiPlatform(models.Model):
    """One registration of this tool on a platform: the platform's endpoints and keys, and the tool's key pair."""

    name = models.CharField(max_length=100)
    issuer = models.CharField(max_length=300)
    client_id = models.CharField(max_length=200)
    auth_login_url = models.URLField(max_length=500, help_text="The platform's OIDC authorisation endpoint")
    auth_token_url = models.URLField(max_length=500, help_text="The platform's OAuth 2 token endpoint")
    key_set_url = models.URLField(max_length=500, blank=True, help_text="The platform's JWKS, or paste key_set")
    key_set = models.JSONField(null=True, blank=True, help_text="The platform's JWKS, when not fetched from its URL")
    deployment_ids = models.JSONField(default=list)
    tool_private_key = models.TextField(help_text="PEM; generated at registration, never shown")
    tool_public_key = models.TextField(help_text="PEM; served at /lti/jwks/")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "client_id"], name="one_lti_registration")]

    def __str__(self) -> str:
        return self.name


class LtiContext(models.Model):
    """An LMS course (its context id on a platform) linked by an instructor to one of our courses."""

    platform = models.ForeignKey(LtiPlatform, on_delete=models.CASCADE, related_name="contexts")
    context_id = models.CharField(max_length=255)
    course = models.ForeignKey("labs.Course", on_delete=models.CASCADE, related_name="lti_contexts")
    memberships_url = models.URLField(max_length=500, blank=True, help_text="Names and Role Provisioning Services")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "context_id"], name="one_link_per_lms_course")]


class LtiResourceLink(models.Model):
    """A link in the LMS that launches one of our assignments, with its Assignment and Grade Services claim."""

    context = models.ForeignKey(LtiContext, on_delete=models.CASCADE, related_name="links")
    resource_link_id = models.CharField(max_length=255)
    assignment = models.ForeignKey("labs.Assignment", on_delete=models.CASCADE, related_name="lti_links")
    ags = models.JSONField(default=dict, help_text="The launch's AGS endpoint claim: scope, lineitem(s)")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["context", "resource_link_id"], name="one_resource_link_per_context")
        ]


class LtiUser(models.Model):
    """Who a platform's user (its `sub`) is here."""

    platform = models.ForeignKey(LtiPlatform, on_delete=models.CASCADE, related_name="users")
    sub = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_identities")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "sub"], name="one_user_per_lms_identity")]
