"""The labs app's pages and JSON API."""

from django.urls import path

import labs.converters  # noqa: F401  (registers <id:...>)
from labs.views import (
    api,
    authoring,
    calculators,
    courses,
    fleet,
    fleet_dashboard,
    fleet_plan,
    grades,
    lti,
    lti_platforms,
    pages,
)

app_name = "labs"
A = "courses/<slug:slug>/a/<slug:assignment_slug>/"
urlpatterns = [
    path("", pages.module_list, name="module_list"),
    path("modules/multi-gpu/calculators/", calculators.multigpu_calculators, name="multigpu_calculators"),
    path("modules/<slug:slug>/", pages.module_detail, name="module"),
    path("exercises/<slug:slug>/", pages.exercise_detail, name="exercise"),
    path("fleet/", fleet.fleet_page, name="fleet"),
    path("fleet/plan/", fleet_plan.plan_page, name="fleet_plan"),
    path("fleet/plan/export/kubernetes/", fleet_plan.export_kubernetes, name="fleet_export_kubernetes"),
    path("fleet/plan/export/<slug:node>/<slug:kind>/", fleet_plan.export_node, name="fleet_export"),
    path("fleet/dashboard/", fleet_dashboard.dashboard_page, name="fleet_dashboard"),
    path("api/openapi.json", api.openapi_document, name="api_openapi"),
    path("api/submissions", api.submissions, name="api_submissions"),
    path("api/drafts", api.learner_drafts, name="api_drafts"),
    path("api/submissions/<uuid:submission_id>", api.submission_detail, name="api_submission"),
    path("api/submissions/<uuid:submission_id>/profile", api.submission_profile, name="api_submission_profile"),
    path("courses/", courses.course_list, name="courses"),
    path("courses/<slug:slug>/", courses.course_detail, name="course"),
    path("courses/<slug:slug>/people", courses.course_people, name="course_people"),
    path("courses/<slug:slug>/assignments/new", courses.assignment_new, name="assignment_new"),
    path("courses/<slug:slug>/gradebook/", grades.gradebook_page, name="gradebook"),
    path("courses/<slug:slug>/gradebook/<str:lms>.csv", grades.gradebook_csv, name="gradebook_csv"),
    path(A, courses.assignment_detail, name="assignment"),
    path(A + "overrides", courses.assignment_override, name="assignment_override"),
    path(A + "basis", courses.assignment_basis, name="assignment_basis"),
    path(A + "students/<str:username>/", grades.student_runs, name="student_runs"),
    path(A + "leaderboard/", grades.leaderboard_page, name="leaderboard"),
    path(A + "regrades", grades.regrade_start, name="regrade_start"),
    path(A + "regrades/<id:regrade_id>/", grades.regrade_page, name="regrade"),
    path(A + "integrity/", grades.integrity_page, name="integrity"),
    path(A + "lti-grades", lti.assignment_lti_grades, name="assignment_lti_grades"),
    path("courses/<slug:slug>/lti", lti.course_lti, name="course_lti"),
    path("authoring/", authoring.draft_list, name="drafts"),
    path("authoring/<slug:slug>/", authoring.draft_detail, name="draft"),
    path("authoring/<slug:slug>.zip", authoring.draft_download, name="draft_zip"),
    path("lti/login/", lti.oidc_login, name="lti_login"),
    path("lti/launch/", lti.launch, name="lti_launch"),
    path("lti/jwks/", lti.jwks, name="lti_jwks"),
    path("lti/platforms/", lti_platforms.platforms_page, name="lti_platforms"),
]
