"""Admin: instructors edit exercise metadata and read runs; content itself comes from lab folders."""

from django.contrib import admin

from labs.models import Exercise, Module, Submission, SubmissionEvent


@admin.register(Module)
class ModuleAdmin(admin.ModelAdmin):
    list_display = ("number", "title", "slug")


@admin.register(Exercise)
class ExerciseAdmin(admin.ModelAdmin):
    list_display = ("title", "module", "order", "languages", "pool", "published", "version")
    list_filter = ("module", "published")
    list_editable = ("order", "published")
    readonly_fields = ("uuid", "slug", "version", "entry", "harness", "limits", "folder", "statement", "starters")
    fields = ("title", "summary", "module", "order", "pool", "published", *readonly_fields)


class EventInline(admin.TabularInline):
    model = SubmissionEvent
    extra = 0
    can_delete = False
    readonly_fields = ("seq", "type", "payload")


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "exercise", "language", "status", "verdict", "queue", "created_at")
    list_filter = ("status", "verdict", "language", "exercise")
    search_fields = ("owner__username", "exercise__slug")
    readonly_fields = [f.name for f in Submission._meta.fields]
    inlines = [EventInline]

    def has_add_permission(self, request) -> bool:  # runs are made by submitting, not by hand
        return False
