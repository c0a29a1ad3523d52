"""LTI 1.3 through pylti1p3: the tool's key pair, registering a platform, linking an LMS course to ours, a launch
(the user, their role and the assignment), roster provisioning (Names and Role Provisioning Services) and grade
passback (Assignment and Grade Services). Every write of the LTI models happens here.

The tool has one key pair (`tool_key`), made the first time anything asks for it, so `/lti/jwks/` publishes it
before any platform is registered: an LMS asks for the tool's key set before it gives out the client id that
the tool is registered with. Each registration signs with it; one made before it keeps its own pair, also published.

A launch lands only in a course whose instructor linked that LMS course (`link_context`): a platform cannot
enrol anyone into a course that did not ask for it. The assignment is the one the launch's target link URI names
(`/courses/<course>/a/<assignment>/`, the URL the instructor pasted into the LMS).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.urls import Resolver404, resolve
from django.utils import timezone
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.grade import Grade
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.registration import Registration
from pylti1p3.service_connector import ServiceConnector
from pylti1p3.tool_config import ToolConfDict

from labs import accounts
from labs.courses import access, grading
from labs.courses.services import CourseInputError, enrol_member
from labs.models import Assignment, Course, LtiContext, LtiPlatform, LtiResourceLink, LtiToolKey, LtiUser
from labs.models.course import Role

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
INSTRUCTOR_ROLES = ("membership#Instructor", "membership#Administrator", "institution/person#Administrator")
TA_ROLE = "membership/Instructor#TeachingAssistant"


class LaunchRefused(PermissionError):
    """A valid launch we will not serve: the message says why, for the person launching."""


def new_key_pair() -> tuple[str, str]:
    """A fresh 2048-bit RSA key pair as PEM: (private PKCS#8, public SubjectPublicKeyInfo)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def tool_key() -> LtiToolKey:
    """The tool's key pair, made now if it was never made (two first askers at once get the same one)."""
    key = LtiToolKey.objects.filter(slot=1).first()
    if key is not None:
        return key
    private, public = new_key_pair()
    key, _ = LtiToolKey.objects.get_or_create(slot=1, defaults={"private_key": private, "public_key": public})
    return key


def _require_admin(actor: User) -> None:
    if not access.is_admin(actor):
        raise PermissionDenied("Only admins register LTI platforms.")


@transaction.atomic
def register_platform(
    actor: User,
    *,
    name: str,
    issuer: str,
    client_id: str,
    auth_login_url: str,
    auth_token_url: str,
    deployment_ids: list[str],
    key_set_url: str = "",
    key_set: dict | None = None,
) -> LtiPlatform:
    """Register the tool on a platform; it signs with the tool's key pair (`tool_key`, published at /lti/jwks/)."""
    _require_admin(actor)
    if not key_set_url and not key_set:
        raise CourseInputError("Give the platform's JWKS URL or its key set.", "key_set_url")
    if not deployment_ids:
        raise CourseInputError("Give at least one deployment id.", "deployment_ids")
    if LtiPlatform.objects.filter(issuer=issuer, client_id=client_id).exists():
        raise CourseInputError(f"{issuer} with client id {client_id} is registered already.", "client_id")
    key = tool_key()
    return LtiPlatform.objects.create(
        name=name,
        issuer=issuer,
        client_id=client_id,
        auth_login_url=auth_login_url,
        auth_token_url=auth_token_url,
        key_set_url=key_set_url,
        key_set=key_set,
        deployment_ids=list(deployment_ids),
        tool_private_key=key.private_key,
        tool_public_key=key.public_key,
    )


def tool_conf() -> ToolConfDict:
    """pylti1p3's configuration of every registered platform, read from the database."""
    data: dict[str, Any] = {}
    platforms = list(LtiPlatform.objects.all())
    for p in platforms:
        data.setdefault(p.issuer, []).append(
            {
                "default": False,
                "client_id": p.client_id,
                "auth_login_url": p.auth_login_url,
                "auth_token_url": p.auth_token_url,
                "key_set_url": p.key_set_url or None,
                "key_set": p.key_set,
                "deployment_ids": p.deployment_ids,
            }
        )
    conf = ToolConfDict(data)
    for p in platforms:
        conf.set_private_key(p.issuer, p.tool_private_key, client_id=p.client_id)
        conf.set_public_key(p.issuer, p.tool_public_key, client_id=p.client_id)
    return conf


def jwks() -> dict[str, list]:
    """The tool's public keys, for platforms to check its signed requests: its key pair's, from the start, and
    that of each registration made before the tool had one."""
    publics = [tool_key().public_key, *LtiPlatform.objects.values_list("tool_public_key", flat=True)]
    return {"keys": [Registration.get_jwk(public) for public in dict.fromkeys(publics)]}


@transaction.atomic
def link_context(course: Course, actor: User, platform: LtiPlatform, context_id: str) -> LtiContext:
    """An instructor links an LMS course (its context id on that platform) to this course."""
    if not access.may_run(course, actor):
        raise PermissionDenied("Only the course's instructors link it to an LMS.")
    context_id = (context_id or "").strip()
    if not context_id:
        raise CourseInputError("Give the LMS course's context id.", "context_id")
    taken = LtiContext.objects.filter(platform=platform, context_id=context_id).exclude(course=course).first()
    if taken is not None:
        raise CourseInputError(f"That LMS course is already linked to {taken.course.title}.", "context_id")
    context, _ = LtiContext.objects.get_or_create(platform=platform, context_id=context_id, course=course)
    return context


def _platform(launch: dict[str, Any]) -> LtiPlatform:
    aud = launch.get("aud")
    client_id = aud[0] if isinstance(aud, list) else aud
    platform = LtiPlatform.objects.filter(issuer=launch.get("iss"), client_id=client_id).first()
    if platform is None:  # pylti1p3 found the registration, so this is only a race with its deletion
        raise LaunchRefused("This platform is not registered.")
    return platform


def _assignment(context: LtiContext, target: str) -> Assignment:
    try:
        match = resolve(urlparse(target or "").path)
    except Resolver404:
        match = None
    if match is None or match.url_name != "assignment" or match.kwargs.get("slug") != context.course.slug:
        raise LaunchRefused(f"The link's target {target!r} is not an assignment of {context.course.title}.")
    assignment = Assignment.objects.filter(course=context.course, slug=match.kwargs["assignment_slug"]).first()
    if assignment is None:
        raise LaunchRefused(f"{context.course.title} has no assignment at {target!r}.")
    return assignment


def _role(roles: list[str]) -> str:
    if any(r.endswith(TA_ROLE) for r in roles):
        return Role.TA
    if any(r.endswith(INSTRUCTOR_ROLES) for r in roles):
        return Role.INSTRUCTOR
    return Role.STUDENT


def _user(platform: LtiPlatform, sub: str, claims: dict[str, Any]) -> User:
    identity = LtiUser.objects.filter(platform=platform, sub=sub).select_related("user").first()
    if identity is not None:
        return identity.user
    base = f"lti{platform.pk}-{sub}"[:150]
    user = User(
        username=base,
        email=str(claims.get("email") or "")[:254],
        first_name=str(claims.get("given_name") or "")[:150],
        last_name=str(claims.get("family_name") or "")[:150],
    )
    user.set_unusable_password()
    user.save()
    user.groups.add(accounts.ensure_roles()[accounts.STUDENTS])
    LtiUser.objects.create(platform=platform, sub=sub, user=user)
    return user


@dataclass
class Launched:
    user: User
    assignment: Assignment
    role: str


@transaction.atomic
def record_launch(launch: dict[str, Any]) -> Launched:
    """A launch pylti1p3 validated: the user (made on first launch), their role in the course, and the link."""
    platform = _platform(launch)
    context_id = str((launch.get(CLAIM + "context") or {}).get("id") or "")
    context = LtiContext.objects.filter(platform=platform, context_id=context_id).select_related("course").first()
    if context is None:
        raise LaunchRefused(
            f"This LMS course (context {context_id!r}) is not linked to a WarpLab course; its instructor links it "
            "on the course's page."
        )
    assignment = _assignment(context, str(launch.get(CLAIM + "target_link_uri") or ""))
    user = _user(platform, str(launch["sub"]), launch)
    role = _role(list(launch.get(CLAIM + "roles") or []))
    existing = access.role_in(context.course, user)
    if existing is None or (existing == Role.STUDENT and role != Role.STUDENT):
        enrol_member(context.course, user, role)
    link_id = str((launch.get(CLAIM + "resource_link") or {}).get("id") or "")
    if link_id:
        LtiResourceLink.objects.update_or_create(
            context=context,
            resource_link_id=link_id,
            defaults={"assignment": assignment, "ags": launch.get(AGS_CLAIM) or {}},
        )
    memberships = (launch.get(NRPS_CLAIM) or {}).get("context_memberships_url")
    if memberships and memberships != context.memberships_url:
        LtiContext.objects.filter(pk=context.pk).update(memberships_url=memberships)
    return Launched(user, assignment, access.role_in(context.course, user) or role)


def _connector(platform: LtiPlatform) -> ServiceConnector:
    registration = tool_conf().find_registration_by_params(platform.issuer, platform.client_id)
    return ServiceConnector(registration)


def sync_roster(course: Course, actor: User) -> list[str]:
    """Enrol every member the linked LMS courses list (NRPS): learners as students; the usernames enrolled."""
    if not access.may_run(course, actor):
        raise PermissionDenied("Only the course's instructors sync the roster.")
    enrolled = []
    for context in course.lti_contexts.select_related("platform").exclude(memberships_url=""):
        nrps = NamesRolesProvisioningService(
            _connector(context.platform), {"context_memberships_url": context.memberships_url}
        )
        members = nrps.get_members()
        with transaction.atomic():
            for member in members:
                if member.get("status", "Active") != "Active" or not member.get("user_id"):
                    continue
                user = _user(context.platform, str(member["user_id"]), member)
                role = _role(list(member.get("roles") or []))
                if access.role_in(course, user) is None:
                    enrol_member(course, user, role)
                    enrolled.append(user.get_username())
    return enrolled


def passback_grades(assignment: Assignment, actor: User) -> int:
    """Send each LMS student's total on the assignment to every line item linked to it (AGS); the count sent."""
    if not access.may_run(assignment.course, actor):
        raise PermissionDenied("Only the course's instructors send grades to the LMS.")
    items = list(assignment.items.select_related("exercise", "assignment"))
    maximum = sum(item.points for item in items)
    sent = 0
    for link in LtiResourceLink.objects.filter(assignment=assignment).select_related("context__platform"):
        if not link.ags.get("lineitem"):
            continue
        platform = link.context.platform
        ags = AssignmentsGradesService(_connector(platform), link.ags)
        for identity in LtiUser.objects.filter(platform=platform).select_related("user"):
            student = identity.user
            if access.role_in(assignment.course, student) != Role.STUDENT:
                continue
            total = sum(grading.grade(item, student).score or 0.0 for item in items)
            grade = (
                Grade()
                .set_score_given(round(total, 3))
                .set_score_maximum(maximum)
                .set_timestamp(timezone.now().isoformat())
                .set_activity_progress("Completed")
                .set_grading_progress("FullyGraded")
                .set_user_id(identity.sub)
                .set_comment("From WarpLab's measurements on exclusive GPU slices")
            )
            ags.put_grade(grade)
            sent += 1
    return sent
