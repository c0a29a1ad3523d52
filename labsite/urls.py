"""URL routing: accounts, admin, and the labs app's pages and API."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, reverse_lazy

urlpatterns = [
    # An invited student (labs.accounts.invite) sets a password with Django's own reset view, in the site's style.
    path(
        "accounts/invitation/done/",
        auth_views.PasswordResetCompleteView.as_view(template_name="registration/invitation_done.html"),
        name="invitation_done",
    ),
    path(
        "accounts/invitation/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="registration/invitation.html", success_url=reverse_lazy("invitation_done")
        ),
        name="invitation",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("", include("labs.urls")),
]

handler400 = "labs.views.errors.bad_request"
handler403 = "labs.views.errors.permission_denied"
handler404 = "labs.views.errors.page_not_found"
handler500 = "labs.views.errors.server_error"
