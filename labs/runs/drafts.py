"""A learner's drafts on the server: the editor's text per exercise and language, saved as they type (the page
debounces) and read back in any browser. The only writer of `SourceDraft`.

A draft may be empty (the learner cleared the editor) but never bigger than a run's source may be, and only for
an exercise the learner may see, in a language it offers.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from gpu_worker.protocol import MAX_SOURCE_BYTES
from labs.models import Exercise, SourceDraft
from labs.runs.services import SubmissionRejected


def save_draft(user: User, exercise_slug: str, language: str, source: str) -> SourceDraft:
    """Keep `source` as `user`'s draft of the exercise in `language`, replacing the one before."""
    exercise = Exercise.objects.visible_to(user).filter(slug=exercise_slug).first()
    if exercise is None:
        raise SubmissionRejected(f"There is no exercise called '{exercise_slug}'.", status=404)
    if language not in exercise.languages:
        raise SubmissionRejected(f"'{exercise.title}' is not offered in {language}.")
    if len(source.encode()) > MAX_SOURCE_BYTES:
        raise SubmissionRejected(f"The draft is over the {MAX_SOURCE_BYTES // 1024} KiB limit.", status=413)
    draft, _ = SourceDraft.objects.update_or_create(
        owner=user, exercise=exercise, language=language, defaults={"source": source}
    )
    return draft


def draft_state(draft: SourceDraft) -> dict[str, Any]:
    """A draft as the API and the exercise page serve it."""
    return {
        "exercise": draft.exercise.slug,
        "language": draft.language,
        "source": draft.source,
        "saved_at": draft.saved_at.isoformat(),
    }


def drafts_of(user: User, exercise: Exercise) -> dict[str, dict[str, Any]]:
    """`user`'s drafts of one exercise, by language."""
    drafts = SourceDraft.objects.filter(owner=user, exercise=exercise).select_related("exercise")
    return {draft.language: draft_state(draft) for draft in drafts}
