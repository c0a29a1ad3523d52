"""Every state change of the lab content: lab folders loaded into modules and exercises, by uuid.

`sync_labs` loads every folder under the content directory (`manage.py sync_labs`), idempotently;
`exercise_values` is an exercise's fields from a loaded folder, shared with labs authored online
(`labs.curriculum.authoring`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from gpu_worker.exercise.labspec import Lab, LabError, load_all
from labs.curriculum.lessons.registry import unknown_figures
from labs.curriculum.markdown import render_markdown
from labs.models import Exercise, Module


@dataclass
class SyncReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def exercise_values(lab: Lab, module: Module) -> dict[str, Any]:
    """An Exercise's fields from a loaded lab folder (its uuid aside): for sync_labs and labs authored online."""
    spec = lab.spec
    return {
        "slug": spec.slug,
        "module": module,
        "title": spec.title,
        "summary": spec.summary,
        "order": spec.order,
        "version": spec.version,
        "languages": list(spec.languages),
        "entry": spec.entry,
        "statement": lab.statement,
        "statement_html": render_markdown(lab.statement),
        "starters": lab.starters,
        "references": lab.references,
        "harness": spec.harness().model_dump(mode="json"),
        "limits": spec.limits.model_dump(mode="json"),
        "pool": spec.pool or "",
        "folder": str(lab.folder),
    }


@transaction.atomic
def sync_labs(content_dir: Path | None = None) -> SyncReport:
    """Load every lab folder into the database, matched by uuid; running it twice changes nothing."""
    modules, labs = load_all(content_dir or settings.WARPLAB_CONTENT_DIR)
    report = SyncReport()
    by_slug = {}
    for spec in modules:
        unknown = unknown_figures(spec.lesson)
        if unknown:
            raise LabError(
                f"{spec.slug}/lesson.md: unknown figure(s) {', '.join(unknown)} (see labs/curriculum/lessons/)"
            )
        module, _ = Module.objects.update_or_create(
            slug=spec.slug,
            defaults={"number": spec.number, "title": spec.title, "summary": spec.summary, "lesson": spec.lesson},
        )
        by_slug[spec.slug] = module
    for lab in labs:
        spec = lab.spec
        values = exercise_values(lab, by_slug[lab.module.slug])
        exercise = Exercise.objects.filter(uuid=spec.uuid).first()
        if exercise is None:
            Exercise.objects.create(uuid=spec.uuid, **values)
            report.created.append(spec.slug)
            continue
        changed = {k: v for k, v in values.items() if getattr(exercise, k) != v}
        if changed:
            for key, value in changed.items():
                setattr(exercise, key, value)
            exercise.save()
            report.updated.append(spec.slug)
        else:
            report.unchanged.append(spec.slug)
    return report
