"""The labs app's pages and JSON API."""

from django.urls import path

from labs.views import api, calculators, fleet, pages

app_name = "labs"
urlpatterns = [
    path("", pages.module_list, name="module_list"),
    path("modules/multi-gpu/calculators/", calculators.multigpu_calculators, name="multigpu_calculators"),
    path("modules/<slug:slug>/", pages.module_detail, name="module"),
    path("exercises/<slug:slug>/", pages.exercise_detail, name="exercise"),
    path("fleet/", fleet.fleet_page, name="fleet"),
    path("api/submissions", api.submissions, name="api_submissions"),
    path("api/submissions/<int:submission_id>", api.submission_detail, name="api_submission"),
]
