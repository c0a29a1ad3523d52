"""Module 5's calculators: collectives, pipeline bubble, data- and tensor-parallel communication, memory; all models.

Read-only pages: GET parameters are validated by `labs.curriculum.calculator_forms`; a
bad value answers 400 with the field and the reason, and no figure.
"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from labs.curriculum.calculator_forms import bound_forms
from labs.curriculum.lessons import multigpu

TITLES = {
    "coll": "Collectives: time and bus bandwidth against message size",
    "pipe": "Pipeline bubble against micro-batches",
    "dp": "Data-parallel gradient all-reduce against model size",
    "tp": "Tensor parallelism: communication against compute",
    "mem": "Activation memory with sequence parallelism",
}


def _figures(forms: dict) -> dict[str, list[dict]]:
    collective = forms["coll"].params()
    return {
        "coll": [multigpu.collective_figure(collective, "time"), multigpu.collective_figure(collective, "busbw")],
        "pipe": [multigpu.bubble_figure(forms["pipe"].params())],
        "dp": [multigpu.data_parallel_figure(forms["dp"].params())],
        "tp": [multigpu.tensor_parallel_figure(forms["tp"].params())],
        "mem": [multigpu.activation_memory_figure(forms["mem"].params())],
    }


@login_required
def multigpu_calculators(request: HttpRequest) -> HttpResponse:
    """Every calculator with its form and figures; 400 with the errors when a parameter is out of range."""
    forms = bound_forms(request.GET)
    errors = [
        f"{TITLES[prefix]}: {forms[prefix][name].label if name in forms[prefix].fields else 'parameters'}: {message}"
        for prefix, form in forms.items()
        if not form.is_valid()
        for name, messages in form.errors.items()
        for message in messages
    ]
    sections, figures = [], []
    built = {} if errors else _figures(forms)
    for prefix, form in forms.items():
        slots = []
        for figure in built.get(prefix, []):
            slot = f"calc-figure-{len(figures) + 1}"
            figures.append({"name": prefix, "slot": slot, "figure": figure})
            slots.append(slot)
        sections.append({"prefix": prefix, "title": TITLES[prefix], "form": form, "slots": slots})
    context = {"sections": sections, "figures": figures, "errors": errors}
    return render(request, "labs/multigpu_calculators.html", context, status=400 if errors else 200)
