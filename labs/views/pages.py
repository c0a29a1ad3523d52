"""HTML pages: the module list and the exercise page with its editor."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from labs.models import Exercise, Module
from labs.models.run import Language


@login_required
def module_list(request: HttpRequest) -> HttpResponse:
    modules = Module.objects.prefetch_related("exercises")
    return render(request, "labs/module_list.html", {"modules": modules})


@login_required
def exercise_detail(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(Exercise.objects.select_related("module"), slug=slug, published=True)
    labels = dict(Language.choices)
    data = {
        "slug": exercise.slug,
        "languages": exercise.languages,
        "starters": exercise.starters,
        "submit_url": reverse("labs:api_submissions"),
        "submissions_url": f"{reverse('labs:api_submissions')}?exercise={exercise.slug}",
        "ws_base": "/ws/submissions/",
        "csrf_token": get_token(request),
        "initial_language": exercise.languages[0],
    }
    context = {
        "exercise": exercise,
        "language_options": [(code, labels.get(code, code)) for code in exercise.languages],
        "exercise_data": data,
    }
    return render(request, "labs/exercise.html", context)
