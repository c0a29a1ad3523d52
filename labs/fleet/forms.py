"""The planner's forms: a node, a GPU, a GPU's layout written one slice a line, and the class to plan for.

A layout line is one of:
    full <pool>
    mig <profile>[@<start>] <pool>          e.g. mig 3g.71gb@4 h200.mig3g (no @: the planner places it)
    mps <percent>[%] <pool> [mem=<MiB>]     e.g. mps 30% h200.mps30 mem=20000
    timeslice <replicas> <pool>             e.g. timeslice 4 h200.ts
A line that does not parse is named with its number; the layout's rules are `fleet_plan`'s.
"""

from __future__ import annotations

import re

from django import forms

from labs.fleet.mig_profiles import MODELS
from labs.fleet.plan import SliceSpec

LINE = re.compile(
    r"^(?:(?P<full>full)\s+(?P<fpool>\S+)"
    r"|mig\s+(?P<profile>[0-9]g\.[0-9]+gb(?:\+me)?)(?:@(?P<start>\d))?\s+(?P<mpool>\S+)"
    r"|mps\s+(?P<pct>\d{1,3})%?\s+(?P<spool>\S+)(?:\s+mem=(?P<mem>\d+))?"
    r"|timeslice\s+(?P<replicas>\d{1,3})\s+(?P<tpool>\S+))\s*$"
)
GRAMMAR = (
    "full <pool> | mig <profile>[@<start>] <pool> | mps <percent>% <pool> [mem=<MiB>] | timeslice <replicas> <pool>"
)


def parse_layout(text: str) -> tuple[list[SliceSpec], list[str]]:
    """The slices the text describes, and a message for every line that is not one."""
    specs, problems = [], []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = LINE.match(line)
        if m is None:
            problems.append(f"line {number}: '{line}' is not a slice; write {GRAMMAR}.")
        elif m["full"]:
            specs.append(SliceSpec(kind="full", pool=m["fpool"]))
        elif m["profile"]:
            start = int(m["start"]) if m["start"] is not None else None
            specs.append(SliceSpec(kind="mig", pool=m["mpool"], profile=m["profile"], placement=start))
        elif m["pct"]:
            mem = int(m["mem"]) if m["mem"] else None
            specs.append(SliceSpec(kind="mps", pool=m["spool"], thread_percent=int(m["pct"]), memory_limit_mib=mem))
        else:
            specs.append(SliceSpec(kind="timeslice", pool=m["tpool"], replicas=int(m["replicas"])))
    return specs, problems


def layout_text(specs: list[SliceSpec]) -> str:
    """The lines `parse_layout` reads back as `specs`."""
    lines = []
    for s in specs:
        if s.kind == "mig":
            at = f"@{s.placement}" if s.placement is not None else ""
            lines.append(f"mig {s.profile}{at} {s.pool}")
        elif s.kind == "mps":
            mem = f" mem={s.memory_limit_mib}" if s.memory_limit_mib else ""
            lines.append(f"mps {s.thread_percent}% {s.pool}{mem}")
        elif s.kind == "timeslice":
            lines.append(f"timeslice {s.replicas} {s.pool}")
        else:
            lines.append(f"full {s.pool}")
    return "\n".join(lines)


class NodeForm(forms.Form):
    name = forms.SlugField(max_length=50)
    hostname = forms.CharField(max_length=200, required=False)


class GpuForm(forms.Form):
    node = forms.SlugField()
    index = forms.IntegerField(min_value=0, max_value=15)
    model = forms.CharField(
        max_length=60, help_text="key or NVML name: " + ", ".join(m.key for m in MODELS), label="GPU model"
    )
    uuid = forms.CharField(max_length=80, required=False, label="GPU UUID")


class LayoutForm(forms.Form):
    gpu = forms.IntegerField(widget=forms.HiddenInput)
    layout = forms.CharField(widget=forms.Textarea(attrs={"rows": 4, "cols": 48}), required=False)


class ClassForm(forms.Form):
    per_minute = forms.FloatField(min_value=0, max_value=10_000, initial=10, label="submissions a minute")
    job_seconds = forms.FloatField(
        min_value=0.01, max_value=3600, initial=2.0, label="GPU-seconds per job on a whole GPU"
    )
