"""The labs app's pages and JSON API."""

from django.urls import path

import labs.converters  # noqa: F401  (registers <id:...>)
from labs.views import api, fleet, fleet_dashboard, fleet_plan, pages

app_name = "labs"
urlpatterns = [
    path("", pages.module_list, name="module_list"),
    path("modules/<slug:slug>/", pages.module_detail, name="module"),
    path("exercises/<slug:slug>/", pages.exercise_detail, name="exercise"),
    path("fleet/", fleet.fleet_page, name="fleet"),
    path("fleet/plan/", fleet_plan.plan_page, name="fleet_plan"),
    path("fleet/plan/export/kubernetes/", fleet_plan.export_kubernetes, name="fleet_export_kubernetes"),
    path("fleet/plan/export/<slug:node>/<slug:kind>/", fleet_plan.export_node, name="fleet_export"),
    path("fleet/dashboard/", fleet_dashboard.dashboard_page, name="fleet_dashboard"),
    path("api/submissions", api.submissions, name="api_submissions"),
    path("api/submissions/<id:submission_id>", api.submission_detail, name="api_submission"),
]
