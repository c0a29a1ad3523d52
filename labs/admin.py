"""Admin: instructors edit exercise metadata and read runs (content comes from lab folders); the fleet plan."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from labs.fleet import services
from labs.models import (
    Course,
    Exercise,
    Gpu,
    LtiPlatform,
    Membership,
    Module,
    Node,
    Pool,
    Slice,
    Submission,
    SubmissionEvent,
    Worker,
)


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


# --- the fleet plan: read here, laid out on the planner page (/fleet/plan/), which checks each layout ---


class SliceInline(admin.TabularInline):
    model = Slice
    extra = 0
    can_delete = False
    fields = ("position", "kind", "pool", "mig_profile", "mig_placement", "mig_uuid", "mps_thread_percent", "replicas")
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:  # layouts are checked whole, on the planner
        return False


class GpuInline(admin.TabularInline):
    model = Gpu
    extra = 0
    fields = ("index", "model", "uuid")
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("name", "hostname", "gpu_count", "planner")
    inlines = [GpuInline]

    @admin.display(description="GPUs")
    def gpu_count(self, node: Node) -> int:
        return node.gpus.count()

    @admin.display(description="layout")
    def planner(self, node: Node) -> str:
        return format_html('<a href="{}#node-{}">lay out in the planner</a>', reverse("labs:fleet_plan"), node.name)


@admin.register(Gpu)
class GpuAdmin(admin.ModelAdmin):
    list_display = ("node", "index", "model", "uuid")
    readonly_fields = ("node", "index", "model")
    inlines = [SliceInline]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    list_display = ("name", "lane", "description")
    readonly_fields = ("name", "lane")

    def has_add_permission(self, request) -> bool:  # pools are made by laying out slices
        return False


@admin.register(Slice)
class SliceAdmin(admin.ModelAdmin):
    list_display = ("__str__", "kind", "pool", "mig_uuid")
    list_filter = ("kind", "pool")
    readonly_fields = [f.name for f in Slice._meta.fields if f.name != "mig_uuid"]

    def has_add_permission(self, request) -> bool:
        return False

    def save_model(self, request, obj: Slice, form, change) -> None:  # only the MIG UUID is edited, and checked
        services.set_mig_uuid(obj, obj.mig_uuid)


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ("name", "slice", "replica")
    readonly_fields = ("name", "slice", "replica")

    def has_add_permission(self, request) -> bool:
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    readonly_fields = ("joined_at",)


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    """Courses are run on their own pages (/courses/...); the admin lists them and their members."""

    list_display = ("title", "slug", "join_code", "board_names", "created_by")
    readonly_fields = ("join_code", "created_by", "created_at")
    inlines = [MembershipInline]


@admin.register(LtiPlatform)
class LtiPlatformAdmin(admin.ModelAdmin):
    """Registered at /lti/platforms/ or with `manage.py register_lti_platform`; the private key is not shown."""

    list_display = ("name", "issuer", "client_id")
    exclude = ("tool_private_key",)
    readonly_fields = ("tool_public_key",)

    def has_add_permission(self, request) -> bool:
        return False
