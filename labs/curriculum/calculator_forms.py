"""The multi-GPU calculators' parameters, read from GET and validated: one Django form per calculator.

Each form has a prefix, so one page's query string carries all five
(`coll-gpus=16&pipe-stages=4`); a parameter left out keeps its default. The
bounds keep every figure small (at most a few hundred points) whatever a
learner types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms

from gpu_worker.multigpu.collectives import COLLECTIVE_NAMES
from labs.curriculum.lessons.multigpu import (
    BubbleParams,
    CollectiveParams,
    DataParallelParams,
    MemoryParams,
    TensorParallelParams,
)

MAX_BYTES = 1 << 40


class CollectiveForm(forms.Form):
    collective = forms.ChoiceField(choices=list(COLLECTIVE_NAMES.items()), initial="all_reduce")
    algorithm = forms.ChoiceField(
        choices=[("both", "ring and tree"), ("ring", "ring"), ("tree", "tree")], initial="both"
    )
    gpus = forms.IntegerField(min_value=2, max_value=65536, initial=8, label="GPUs")
    smallest = forms.IntegerField(min_value=1, max_value=MAX_BYTES, initial=8, label="smallest message (bytes)")
    largest = forms.IntegerField(min_value=1, max_value=MAX_BYTES, initial=1 << 30, label="largest message (bytes)")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("smallest") and data.get("largest") and data["smallest"] > data["largest"]:
            raise forms.ValidationError("the smallest message must not be larger than the largest")
        return data

    def params(self) -> CollectiveParams:
        d = self.cleaned_data
        algorithms = ("ring", "tree") if d["algorithm"] == "both" else (d["algorithm"],)
        return CollectiveParams(d["collective"], d["gpus"], d["smallest"], d["largest"], algorithms)


class BubbleForm(forms.Form):
    stages = forms.IntegerField(min_value=1, max_value=1024, initial=8, label="pipeline stages p")
    max_micro_batches = forms.IntegerField(min_value=1, max_value=1024, initial=64, label="up to m micro-batches")

    def params(self) -> BubbleParams:
        return BubbleParams(self.cleaned_data["stages"], self.cleaned_data["max_micro_batches"])


class DataParallelForm(forms.Form):
    gpus = forms.IntegerField(min_value=2, max_value=1_000_000, initial=64, label="data-parallel GPUs")
    bytes_per_grad = forms.TypedChoiceField(
        choices=[(2, "2 (BF16)"), (4, "4 (FP32)")], coerce=int, initial=2, label="bytes per gradient"
    )
    tokens_per_gpu = forms.IntegerField(
        min_value=1, max_value=10_000_000, initial=4096, label="tokens per GPU per step"
    )

    def params(self) -> DataParallelParams:
        d = self.cleaned_data
        return DataParallelParams(d["gpus"], d["bytes_per_grad"], d["tokens_per_gpu"])


class TensorParallelForm(forms.Form):
    batch = forms.IntegerField(min_value=1, max_value=4096, initial=1, label="micro-batch b")
    seq = forms.IntegerField(min_value=1, max_value=1_048_576, initial=2048, label="sequence s")
    hidden = forms.IntegerField(min_value=64, max_value=131072, initial=12288, label="hidden h")
    max_tp = forms.IntegerField(min_value=2, max_value=128, initial=64, label="up to t GPUs")
    efficiency = forms.FloatField(min_value=0.01, max_value=1.0, initial=1.0, label="share of the BF16 peak")

    def params(self) -> TensorParallelParams:
        d = self.cleaned_data
        return TensorParallelParams(d["batch"], d["seq"], d["hidden"], d["max_tp"], d["efficiency"])


class MemoryForm(forms.Form):
    seq = forms.IntegerField(min_value=1, max_value=1_048_576, initial=2048, label="sequence s")
    batch = forms.IntegerField(min_value=1, max_value=4096, initial=1, label="micro-batch b")
    hidden = forms.IntegerField(min_value=64, max_value=131072, initial=12288, label="hidden h")
    heads = forms.IntegerField(min_value=1, max_value=1024, initial=96, label="attention heads a")
    layers = forms.IntegerField(min_value=1, max_value=1024, initial=96, label="layers L")

    def params(self) -> MemoryParams:
        d = self.cleaned_data
        return MemoryParams(d["seq"], d["batch"], d["hidden"], d["heads"], d["layers"])


FORMS: dict[str, type[forms.Form]] = {
    "coll": CollectiveForm,
    "pipe": BubbleForm,
    "dp": DataParallelForm,
    "tp": TensorParallelForm,
    "mem": MemoryForm,
}


def bound_forms(query: Mapping[str, str]) -> dict[str, forms.Form]:
    """Every calculator's form, bound to its defaults overlaid with the query's values for its prefix."""
    bound = {}
    for prefix, form_class in FORMS.items():
        data = {f"{prefix}-{name}": str(field.initial) for name, field in form_class.base_fields.items()}
        data.update({k: v for k, v in query.items() if k.startswith(f"{prefix}-")})
        bound[prefix] = form_class(data, prefix=prefix)
    return bound
