"""The admins' LTI page: the tool's addresses and key set to give an LMS (published before anything is registered),
the platforms registered, and a form to register one: what `manage.py register_lti_platform` does, in the browser."""

from __future__ import annotations

import json
import re

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from pylti1p3.registration import Registration

from labs.courses import access, lti
from labs.courses.services import CourseInputError
from labs.models import LtiPlatform


class PlatformForm(forms.Form):
    """A platform as its LMS admin reads it off the LMS's tool registration (Canvas's developer key, Moodle's tool)."""

    name = forms.CharField(max_length=100, help_text="What instructors pick it by, e.g. “Canvas”.")
    issuer = forms.CharField(max_length=300, help_text="The LMS's issuer (iss), e.g. https://canvas.instructure.com")
    client_id = forms.CharField(max_length=200, help_text="The client id the LMS gave this tool.")
    auth_login_url = forms.URLField(max_length=500, assume_scheme="https", label="OIDC authorisation URL")
    auth_token_url = forms.URLField(max_length=500, assume_scheme="https", label="OAuth 2 token URL")
    key_set_url = forms.URLField(
        max_length=500, assume_scheme="https", required=False, label="The LMS's key set URL (JWKS)"
    )
    key_set = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="or its key set, pasted (JSON)",
    )
    deployment_ids = forms.CharField(max_length=1000, help_text="One or more, separated by commas or spaces.")

    def clean_key_set(self) -> dict | None:
        text = self.cleaned_data["key_set"].strip()
        if not text:
            return None
        try:
            keys = json.loads(text)
        except ValueError:
            raise forms.ValidationError("The key set is not JSON.") from None
        if not isinstance(keys, dict) or not isinstance(keys.get("keys"), list):
            raise forms.ValidationError('A key set is a JSON object with a "keys" list.')
        return keys

    def clean_deployment_ids(self) -> list[str]:
        ids = [d for d in re.split(r"[\s,]+", self.cleaned_data["deployment_ids"]) if d]
        if not ids:
            raise forms.ValidationError("Give at least one deployment id.")
        return ids


def _tool_facts(request: HttpRequest) -> dict:
    key = lti.tool_key()
    absolute = request.build_absolute_uri
    return {
        "login_url": absolute(reverse("labs:lti_login")),
        "launch_url": absolute(reverse("labs:lti_launch")),
        "jwks_url": absolute(reverse("labs:lti_jwks")),
        "kid": Registration.get_jwk(key.public_key).get("kid", ""),
        "public_key": key.public_key,
    }


@login_required
@require_http_methods(["GET", "POST"])
def platforms_page(request: HttpRequest) -> HttpResponse:
    """GET: what to give the LMS and who is registered; POST: register a platform."""
    if not access.is_admin(request.user):
        raise PermissionDenied("LTI platforms are registered by admins.")
    form = PlatformForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                platform = lti.register_platform(request.user, **form.cleaned_data)
            except CourseInputError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                messages.success(request, f"Registered {platform.name}: its instructors can link LMS courses now.")
                return redirect("labs:lti_platforms")
        status = 400
    context = {"form": form, "tool": _tool_facts(request), "platforms": LtiPlatform.objects.order_by("name")}
    return render(request, "labs/lti_platforms.html", context, status=status)
