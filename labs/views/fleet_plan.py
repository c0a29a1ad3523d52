"""The planner, for admins: nodes and GPUs, each GPU's layout drawn, what it means for a class, and the exports.

Forms post back here and change the plan only through `labs.fleet.services`; an impossible layout
is shown again with every reason. An export is checked by its tool when downloaded; one that fails
its check is not offered as a file but as its problems (HTTP 409).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from labs.fleet import export_checks as checks
from labs.fleet import exports, services
from labs.fleet.capacity import MODEL_WORDS, lane_capacity
from labs.fleet.drawing import draw
from labs.fleet.forms import GRAMMAR, ClassForm, GpuForm, LayoutForm, NodeForm, layout_text, parse_layout
from labs.fleet.mig_profiles import MODELS, model_for
from labs.fleet.plan import LayoutError, share
from labs.fleet.stats import job_time
from labs.models import Gpu, Node


def require_fleet_admin(request: HttpRequest) -> None:
    """The planner and the dashboard are for admins (superusers, or whoever may change slices)."""
    if not request.user.is_superuser and not request.user.has_perm("labs.change_slice"):
        raise PermissionDenied("The fleet planner is for admins.")


def _gpu_view(gpu: Gpu, posted: dict[int, tuple[str, list[str]]]) -> dict:
    specs = services.specs_of(gpu)
    model = model_for(gpu.model)
    text, problems = posted.get(gpu.pk, (layout_text(specs), []))
    rows = []
    for s, spec in zip(gpu.slices.select_related("pool").prefetch_related("workers"), specs, strict=True):
        rows.append({"slice": s, "share": share(gpu.model, spec).words, "workers": [w.name for w in s.workers.all()]})
    return {
        "gpu": gpu,
        "model": model,
        "svg": draw(gpu.model, specs, f"GPU {gpu.index} of {gpu.node.name}"),
        "form": LayoutForm(initial={"gpu": gpu.pk, "layout": text}),
        "problems": problems,
        "rows": rows,
    }


def _class_model(form: ClassForm) -> dict:
    measured = job_time()
    per_minute = form.cleaned_data["per_minute"] if form.is_valid() else 10.0
    seconds = form.cleaned_data["job_seconds"] if form.is_valid() and form.cleaned_data.get("job_seconds") else None
    seconds = seconds or measured.seconds
    exclusive: list = []
    shared: list = []
    for gpu in Gpu.objects.all():
        for spec in services.specs_of(gpu):
            (exclusive if spec.exclusive else shared).append(share(gpu.model, spec))
    return {
        "per_minute": per_minute,
        "job_seconds": seconds,
        "measured": measured,
        "graded": lane_capacity("graded (exclusive slices)", exclusive, per_minute, seconds),
        "practice": lane_capacity("practice (any slice)", exclusive + shared, per_minute, seconds),
        "model_words": MODEL_WORDS,
    }


def _post(request: HttpRequest, posted: dict[int, tuple[str, list[str]]]) -> bool:
    """Apply one form; True when it changed the plan (redirect), False to show the page with its problems."""
    action = request.POST.get("action")
    try:
        if action == "add-node":
            form = NodeForm(request.POST)
            if not form.is_valid():
                messages.error(request, f"The node was not added: {form.errors.as_text()}")
                return False
            services.add_node(form.cleaned_data["name"], form.cleaned_data["hostname"])
        elif action == "add-gpu":
            gform = GpuForm(request.POST)
            if not gform.is_valid():
                messages.error(request, f"The GPU was not added: {gform.errors.as_text()}")
                return False
            node = get_object_or_404(Node, name=gform.cleaned_data["node"])
            data = gform.cleaned_data
            services.add_gpu(node, data["index"], data["model"], data["uuid"])
        elif action == "layout":
            gpu = get_object_or_404(Gpu, pk=request.POST.get("gpu"))
            text = request.POST.get("layout", "")
            specs, problems = parse_layout(text)
            if problems:
                posted[gpu.pk] = (text, problems)
                return False
            try:
                services.lay_out(gpu, specs)
            except LayoutError as exc:
                posted[gpu.pk] = (text, exc.problems)
                return False
        elif action == "remove-gpu":
            services.remove_gpu(get_object_or_404(Gpu, pk=request.POST.get("gpu")))
        else:
            messages.error(request, f"Unknown action {action!r}.")
            return False
    except LayoutError as exc:
        messages.error(request, " ".join(exc.problems))
        return False
    return True


@login_required
def plan_page(request: HttpRequest) -> HttpResponse:
    require_fleet_admin(request)
    posted: dict[int, tuple[str, list[str]]] = {}
    if request.method == "POST" and _post(request, posted):
        return redirect(reverse("labs:fleet_plan"))
    class_form = ClassForm(request.GET or None)
    nodes = []
    for node in Node.objects.prefetch_related("gpus"):
        nodes.append(
            {
                "node": node,
                "gpus": [_gpu_view(g, posted) for g in node.gpus.all()],
                "exports": [
                    {"kind": kind, "url": reverse("labs:fleet_export", args=[node.name, kind]), "check": words}
                    for kind, words in checks.VALIDATORS.items()
                    if kind != "kubernetes"
                ],
            }
        )
    context = {
        "nodes": nodes,
        "models": MODELS,
        "grammar": GRAMMAR,
        "node_form": NodeForm(),
        "gpu_form": GpuForm(),
        "class_form": class_form,
        "capacity": _class_model(class_form),
        "kubernetes_url": reverse("labs:fleet_export_kubernetes"),
        "kubernetes_check": checks.VALIDATORS["kubernetes"],
    }
    return render(request, "labs/fleet_plan.html", context, status=422 if posted else 200)


def _check(export: exports.Export, node: Node | None) -> list[str]:
    if export.kind == "mig-parted" and node is not None:
        return checks.check_mig_parted(export.text, {g.index: g.model for g in node.gpus.all()})
    return {
        "device-plugin": checks.check_device_plugin,
        "compose": checks.check_compose,
        "commands": checks.check_commands,
        "kubernetes": checks.check_kubernetes,
    }[export.kind](export.text)


def _download(export: exports.Export, node: Node | None) -> HttpResponse:
    problems = _check(export, node)
    if problems:
        body = f"The {export.kind} export failed its check ({checks.VALIDATORS[export.kind]}):\n" + "\n".join(problems)
        return HttpResponse(body, status=409, content_type="text/plain; charset=utf-8")
    response = HttpResponse(export.text, content_type=f"{export.content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    response["X-WarpLab-Checked-By"] = checks.VALIDATORS[export.kind]
    return response


@login_required
def export_node(request: HttpRequest, node: str, kind: str) -> HttpResponse:
    require_fleet_admin(request)
    found = get_object_or_404(Node, name=node)
    make = exports.NODE_EXPORTS.get(kind)
    if make is None:
        raise Http404(f"No export called {kind}.")
    return _download(make(found), found)


@login_required
def export_kubernetes(request: HttpRequest) -> HttpResponse:
    require_fleet_admin(request)
    export = exports.kubernetes()
    if not export.text:
        return HttpResponse("No pool has slices yet: nothing to deploy.", status=409, content_type="text/plain")
    return _download(export, None)
