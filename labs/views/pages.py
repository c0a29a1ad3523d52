"""HTML pages: the module list, a module's lesson page, and the exercise page with its editor."""

import redis
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from labs.curriculum.lessons import LessonContext, render_lesson
from labs.fleet import budgets, heartbeats, languages, routing, stats
from labs.models import Exercise, Module
from labs.models.run import Language
from labs.runs import drafts, progress


@login_required
def module_list(request: HttpRequest) -> HttpResponse:
    modules = Module.objects.prefetch_related("exercises")
    return render(request, "labs/module_list.html", {"modules": progress.modules_progress(request.user, modules)})


@login_required
def module_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """The module's lesson, its figures built now (the machine you are on is whatever GPU worker is live)."""
    module = get_object_or_404(Module, slug=slug)
    try:
        workers = heartbeats.workers()
    except redis.RedisError:  # the lesson still reads without a fleet: its figures say "datasheets only"
        workers = []
    lesson = render_lesson(module.lesson, LessonContext(workers=workers))
    exercises = list(module.exercises.visible_to(request.user))
    context = {"module": module, "lesson_html": lesson.html, "figures": lesson.figures, "exercises": exercises}
    return render(request, "labs/module_detail.html", context)


@login_required
def exercise_detail(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(Exercise.objects.visible_to(request.user).select_related("module"), slug=slug)
    labels = dict(Language.choices)
    data = {
        "slug": exercise.slug,
        "languages": exercise.languages,
        "starters": exercise.starters,
        "submit_url": reverse("labs:api_submissions"),
        "submissions_url": f"{reverse('labs:api_submissions')}?exercise={exercise.slug}",
        "ws_base": "/ws/submissions/",
        "csrf_token": get_token(request),
        "drafts_url": reverse("labs:api_drafts"),
        "drafts": drafts.drafts_of(request.user, exercise),  # the server's copies: the editor opens on them
        "initial_language": exercise.languages[0],
        "language_notes": languages.language_notes(exercise),
    }
    choices = (exercise.harness or {}).get("launch_choices") or {}
    default_block = str(((exercise.harness or {}).get("launch") or {}).get("block", [""])[0])
    block_sizes = [(size, str(size) == default_block) for size in choices.get("block", [])]
    if (after := progress.next_exercise(exercise, request.user)) is not None:
        data["next_exercise"] = {"title": after.title, "url": reverse("labs:exercise", args=[after.slug])}
    context = {
        "exercise": exercise,
        "language_options": [(code, labels.get(code, code)) for code in exercise.languages],
        "exercise_data": data,
        "block_sizes": block_sizes,
        # the sweep times every block size: only where this lab's runs go to a GPU now, and said so where not
        "sweep_on_gpu": bool(block_sizes) and routing.route(exercise).queue.startswith("gpu."),
        # what is left of the learner's GPU time, and about how many runs that is (the CPU tier is free)
        "gpu_left": budgets.left_words(request.user, stats.job_time().seconds),
    }
    return render(request, "labs/exercise.html", context)
