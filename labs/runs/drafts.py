"""A learner's drafts on the server: the editor's text per exercise and language, saved as they type (the page
debounces) and read back in any browser. The only writer of `SourceDraft`.

A draft may be empty (the learner cleared the editor) but never bigger than a run's source may be, and only for
an exercise the learner may see, in a language it offers.
"""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth.models import User
from django.db import OperationalError

from gpu_worker.protocol import MAX_SOURCE_BYTES
from labs.models import Exercise, SourceDraft
from labs.runs.services import SubmissionRejected

SAVE_ATTEMPTS = 4


def save_draft(user: User, exercise_slug: str, language: str, source: str) -> SourceDraft:
    """Keep `source` as `user`'s draft of the exercise in `language`, replacing the one before."""
    exercise = Exercise.objects.visible_to(user).filter(slug=exercise_slug).first()
    if exercise is None:
        raise SubmissionRejected(f"There is no exercise called '{exercise_slug}'.", status=404)
    if language not in exercise.languages:
        raise SubmissionRejected(f"'{exercise.title}' is not offered in {language}.")
    if len(source.encode()) > MAX_SOURCE_BYTES:
        raise SubmissionRejected(f"The draft is over the {MAX_SOURCE_BYTES // 1024} KiB limit.", status=413)
    for attempt in range(SAVE_ATTEMPTS):
        try:
            draft, _ = SourceDraft.objects.update_or_create(
                owner=user, exercise=exercise, language=language, defaults={"source": source}
            )
            return draft
        except OperationalError:
            # SQLite (`./lab up`) refuses a transaction that began by reading and then writes while the web-queue
            # worker stores a run's events ("database is locked", at once, whatever the timeout): the save is
            # idempotent, so take it again rather than answer the typing learner 503
            if attempt == SAVE_ATTEMPTS - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


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
