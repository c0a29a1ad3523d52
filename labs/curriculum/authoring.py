"""Labs authored in the browser: save a draft (edited or uploaded as a zip), validate it, publish it, download it.

Validation loads the draft exactly as `sync_labs` loads a folder (`gpu_worker.exercise.labspec.load_lab`, naming the
file and field of any fault), writes it into a hidden, unpublished draft exercise (`<slug>-draft`) and runs
every sample case through the normal submit path on the `sim` queue. Publishing needs every sample finished
with the verdict it must get on `sim`; it copies the draft into the live exercise `<slug>` with the next
version (so a run's job carries the version it ran against) and leaves the draft to edit further. Drafts are
never visible to students: their exercises are unpublished until then. An author publishes into a course they
run, and only its members see the lab; only an admin publishes into the public catalogue, for everyone. A lab
started as a copy of another gets a fresh `uuid` (and its own slug) in its lab.yaml, so its zip loads as a lab
of its own.
"""

from __future__ import annotations

import io
import re
import tempfile
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from gpu_worker.exercise.labspec import LabError, ModuleSpec, load_lab
from labs.courses import access
from labs.courses.services import CourseInputError
from labs.curriculum.services import exercise_values
from labs.models import Course, Exercise, LabDraft, Module, Submission
from labs.runs.services import submit_run

MAX_FILES = 64
MAX_FILE_BYTES = 256 * 1024
NAMESPACE = uuid.UUID("5b0c9a8e-3f5e-4c57-9a51-6c1f2d0e7a10")  # draft exercises' uuids derive from it
SAFE_PATH = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+){0,2}")


def may_author(user: object) -> bool:
    return access.may_create_course(user)


def _require(draft: LabDraft, actor: User) -> None:
    if not (access.is_admin(actor) or draft.author_id == actor.pk):
        raise PermissionDenied("Only its author edits a draft.")


def _clean_files(files: dict[str, str]) -> dict[str, str]:
    if len(files) > MAX_FILES:
        raise CourseInputError(f"A lab has at most {MAX_FILES} files.", "files")
    clean = {}
    for path, text in files.items():
        path = path.strip().strip("/")
        if not SAFE_PATH.fullmatch(path) or ".." in PurePosixPath(path).parts:
            raise CourseInputError(f"{path!r}: not a file name a lab folder may hold.", "files")
        if len(text.encode()) > MAX_FILE_BYTES:
            raise CourseInputError(f"{path}: over {MAX_FILE_BYTES // 1024} KiB.", "files")
        clean[path] = text.replace("\r\n", "\n")
    if "lab.yaml" not in clean:
        raise CourseInputError("lab.yaml: file is missing.", "files")
    return clean


@transaction.atomic
def save_draft(actor: User, slug: str, module_slug: str, files: dict[str, str]) -> LabDraft:
    """Create or replace a draft's files; the slug names the lab folder."""
    if not may_author(actor):
        raise PermissionDenied("Only instructors author labs.")
    slug = (slug or "").strip()
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{1,40}", slug):
        raise CourseInputError("The lab's slug is lower-case letters, digits and dashes.", "slug")
    module = Module.objects.filter(slug=module_slug).first()
    if module is None:
        raise CourseInputError(f"There is no module called {module_slug!r}.", "module")
    draft = LabDraft.objects.filter(slug=slug).first()
    if draft is not None:
        _require(draft, actor)
    elif Exercise.objects.filter(slug=slug).exclude(authored_as__isnull=False).exists():
        raise CourseInputError(f"{slug!r} is a built-in lab; its folder on disk is its source.", "slug")
    files = _clean_files(files)
    if draft is None:
        return LabDraft.objects.create(author=actor, slug=slug, module=module, files=files)
    draft.files, draft.module, draft.validation, draft.validated_at = files, module, [], None
    draft.save()
    return draft


def copy_files(files: dict[str, str], source_slug: str, slug: str) -> dict[str, str]:
    """Another lab's folder as the start of a new one: its lab.yaml gets the new slug and a fresh uuid."""
    lab_yaml = re.sub(rf"^slug:\s*{re.escape(source_slug)}\s*$", f"slug: {slug}", files.get("lab.yaml", ""), flags=re.M)
    lab_yaml = re.sub(r"^uuid:.*$", f"uuid: {uuid.uuid4()}", lab_yaml, count=1, flags=re.M)
    return files | {"lab.yaml": lab_yaml}


def files_from_zip(data: bytes) -> dict[str, str]:
    """A lab folder uploaded as a zip (the folder itself or its contents at the top) as path -> text."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise CourseInputError("The upload is not a zip file.", "zip") from None
    names = [n for n in archive.namelist() if not n.endswith("/")]
    if len(names) > MAX_FILES:
        raise CourseInputError(f"A lab has at most {MAX_FILES} files.", "zip")
    tops = {n.split("/", 1)[0] for n in names}
    strip = len(tops) == 1 and all("/" in n for n in names)
    files = {}
    for name in names:
        info = archive.getinfo(name)
        if info.file_size > MAX_FILE_BYTES:
            raise CourseInputError(f"{name}: over {MAX_FILE_BYTES // 1024} KiB.", "zip")
        try:
            text = archive.read(name).decode()
        except UnicodeDecodeError:
            raise CourseInputError(f"{name}: not a text file.", "zip") from None
        files[name.split("/", 1)[1] if strip else name] = text
    return files


def draft_zip(draft: LabDraft) -> bytes:
    """The draft as a lab folder `<slug>/`, zipped: drop it into labs/content/<module>/ and sync_labs loads it."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, text in sorted(draft.files.items()):
            archive.writestr(f"{draft.slug}/{path}", text)
    return out.getvalue()


def _load(draft: LabDraft):
    module = draft.module
    spec = ModuleSpec(number=module.number, slug=module.slug, title=module.title, summary=module.summary)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / draft.slug
        for path, text in draft.files.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text)
        try:
            lab = load_lab(folder, spec)
        except LabError as exc:
            raise CourseInputError(str(exc).replace(f"{tmp}/", ""), "files") from None
    lab.folder = Path(f"authored/{draft.slug}")
    return lab


def validate(draft: LabDraft, actor: User) -> list[Submission]:
    """Load the draft (a bad lab.yaml is named with its field) and run every sample on sim; the runs queued."""
    _require(draft, actor)
    lab = _load(draft)
    if lab.spec.slug != draft.slug:
        raise CourseInputError(f"lab.yaml: field 'slug' must be {draft.slug!r}.", "files")
    values = exercise_values(lab, draft.module)
    values |= {"slug": f"{draft.slug}-draft", "published": False, "title": f"{lab.spec.title} (draft)"}
    with transaction.atomic():
        exercise, _ = Exercise.objects.update_or_create(uuid=uuid.uuid5(NAMESPACE, draft.slug), defaults=values)
        runs, plan = [], []
        for case in lab.cases:
            run = submit_run(
                actor, exercise.slug, case.language, case.source, queue="sim", rate_limited=False, draft=True
            )
            runs.append(run)
            expected = case.verdict_on("sim")
            plan.append({"case": case.name, "language": case.language, "expected": expected, "submission_id": run.pk})
        draft.draft_exercise, draft.validation, draft.validated_at = exercise, plan, timezone.now()
        draft.save(update_fields=["draft_exercise", "validation", "validated_at", "updated_at"])
    return runs


@dataclass
class CaseState:
    case: str
    language: str
    expected: str
    actual: str  # the verdict, or "queued"/"running"
    submission_id: int

    @property
    def matches(self) -> bool:
        return self.actual == self.expected


def validation_state(draft: LabDraft) -> list[CaseState]:
    runs = {s.pk: s for s in Submission.objects.filter(pk__in=[c["submission_id"] for c in draft.validation])}
    states = []
    for c in draft.validation:
        run = runs.get(c["submission_id"])
        actual = (run.verdict or run.status) if run is not None else "missing"
        states.append(CaseState(c["case"], c["language"], c["expected"], actual, c["submission_id"]))
    return states


def _require_publish_into(course: Course | None, actor: User) -> None:
    if course is None and not access.is_admin(actor):
        raise CourseInputError("Choose a course you run; only an admin publishes into the public catalogue.", "course")
    if course is not None and not (access.is_admin(actor) or access.may_run(course, actor)):
        raise PermissionDenied("Only the course's instructors publish a lab into it.")


@transaction.atomic
def publish(draft: LabDraft, actor: User, course: Course | None = None) -> Exercise:
    """Publish a validated draft whose every sample got its verdict: the live exercise, at its next version.

    It is published into `course` (only its members see it), or with none into the public catalogue (admins only).
    """
    _require(draft, actor)
    _require_publish_into(course, actor)
    states = validation_state(draft)
    if not states:
        raise CourseInputError("Validate the lab before publishing it.", "validation")
    wrong = [s for s in states if not s.matches]
    if wrong:
        first = wrong[0]
        raise CourseInputError(
            f"tests/{first.case}: expected {first.expected} on sim, got {first.actual}; fix it and validate again.",
            "validation",
        )
    lab = _load(draft)
    values = exercise_values(lab, draft.module) | {"published": True, "course": course}
    live = draft.published or Exercise.objects.filter(slug=draft.slug).first()
    if live is None:
        live = Exercise.objects.create(uuid=uuid.uuid4(), **values)
    else:
        values["version"] = max(live.version + 1, lab.spec.version)
        for key, value in values.items():
            setattr(live, key, value)
        live.save()
    draft.published = live
    draft.save(update_fields=["published", "updated_at"])
    return live
