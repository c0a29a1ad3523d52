"""URL routing: accounts, admin, and the labs app's pages and API."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("", include("labs.urls")),
]

handler400 = "labs.views.errors.bad_request"
handler403 = "labs.views.errors.permission_denied"
handler404 = "labs.views.errors.page_not_found"
handler500 = "labs.views.errors.server_error"
