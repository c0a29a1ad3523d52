"""Lab authoring pages: my drafts, a new one (from a zip or a copy of a lab), the editor with validation and
publishing, and the draft as a zip. Instructors and admins only; every change goes through
`labs.curriculum.authoring`."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from labs.courses import access
from labs.courses.services import CourseInputError
from labs.curriculum import authoring
from labs.models import Course, Exercise, LabDraft, Module

TEXT_SUFFIXES = {".yaml", ".yml", ".md", ".py", ".cu", ".txt"}


def _author(request: HttpRequest) -> None:
    if not authoring.may_author(request.user):
        raise PermissionDenied("Lab authoring is for instructors.")


def _draft_or_404(request: HttpRequest, slug: str) -> LabDraft:
    draft = LabDraft.objects.filter(slug=slug).select_related("module", "published").first()
    if draft is None or not (request.user.is_superuser or draft.author_id == request.user.pk):
        raise Http404("No such draft.")
    return draft


def _folder_files(exercise: Exercise) -> dict[str, str]:
    folder = Path(exercise.folder)
    if not folder.is_dir():
        return {}
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts
    }


@login_required
def draft_list(request: HttpRequest) -> HttpResponse:
    _author(request)
    error, status = "", 200
    if request.method == "POST":
        post = request.POST
        try:
            if upload := request.FILES.get("zip"):
                files = authoring.files_from_zip(upload.read())
            else:
                source = Exercise.objects.filter(slug=post.get("copy_of", ""), published=True).first()
                if source is None:
                    raise CourseInputError("Upload a lab folder as a zip, or pick a lab to start from.", "copy_of")
                files = authoring.copy_files(_folder_files(source), source.slug, post.get("slug", ""))
            draft = authoring.save_draft(request.user, post.get("slug", ""), post.get("module", ""), files)
            return redirect("labs:draft", draft.slug)
        except CourseInputError as exc:
            error, status = exc.message, 400
    drafts = LabDraft.objects.all() if request.user.is_superuser else LabDraft.objects.filter(author=request.user)
    context = {
        "drafts": drafts.select_related("module", "published"),
        "modules": Module.objects.all(),
        "labs": Exercise.objects.filter(published=True),
        "error": error,
    }
    return render(request, "labs/authoring/list.html", context, status=status)


def _editor(request: HttpRequest, draft: LabDraft, error: str = "", status: int = 200, **extra) -> HttpResponse:
    states = authoring.validation_state(draft)
    context = {
        "draft": draft,
        "courses": [c for c in access.courses_for(request.user) if access.may_run(c, request.user)],
        "may_publish_publicly": access.is_admin(request.user),
        "files": sorted(draft.files.items()),
        "states": states,
        "publishable": bool(states) and all(s.matches for s in states),
        "error": error,
        **extra,
    }
    return render(request, "labs/authoring/draft.html", context, status=status)


def _publish_into(request: HttpRequest) -> Course | None:
    """The course a draft is published into (one the author runs), or None for the public catalogue."""
    slug = request.POST.get("course", "")
    if not slug:
        return None
    course = Course.objects.filter(slug=slug).first()
    if course is None or not access.may_see(course, request.user):
        raise CourseInputError(f"There is no course called {slug!r}.", "course")
    return course


@login_required
def draft_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the editor and the last validation; POST action=save|validate|publish."""
    _author(request)
    draft = _draft_or_404(request, slug)
    if request.method != "POST":
        return _editor(request, draft)
    action = request.POST.get("action")
    try:
        if action == "save":
            files = {p: request.POST.get(f"file:{p}", t) for p, t in draft.files.items()}
            files = {p: t for p, t in files.items() if request.POST.get(f"delete:{p}") != "on"}
            if new_path := request.POST.get("new_path", "").strip():
                files[new_path] = request.POST.get("new_text", "")
            draft = authoring.save_draft(request.user, draft.slug, draft.module.slug, files)
        elif action == "validate":
            authoring.validate(draft, request.user)
        elif action == "publish":
            exercise = authoring.publish(draft, request.user, _publish_into(request))
            return _editor(request, draft, published=exercise)
        else:
            raise CourseInputError(f"Unknown action {action!r}.", "action")
    except CourseInputError as exc:
        return _editor(request, draft, exc.message, 400)
    return redirect("labs:draft", draft.slug)


@login_required
@require_GET
def draft_download(request: HttpRequest, slug: str) -> HttpResponse:
    _author(request)
    draft = _draft_or_404(request, slug)
    response = HttpResponse(authoring.draft_zip(draft), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{draft.slug}.zip"'
    return response
