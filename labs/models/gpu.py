"""The fleet as planned: nodes, their GPUs, the slices each GPU is cut into, the pools (queues) and workers.

What is planned here is exported (`labs.fleet.exports`) and started by an admin; the web app never
changes a GPU. What is live comes from the workers' heartbeats (`labs.fleet.heartbeats`), matched by worker name.
Every change goes through `labs.fleet.services`, which checks a GPU's whole layout first.
"""

from __future__ import annotations

from django.db import models


class Lane(models.TextChoices):
    """Graded and ranked timings only on exclusive slices; practice may share a GPU."""

    EXCLUSIVE = "exclusive", "Exclusive (graded and practice)"
    SHARED = "shared", "Shared GPU (practice only, indicative)"


class SliceKind(models.TextChoices):
    FULL = "full", "Whole GPU"
    MIG = "mig", "MIG instance"
    MPS = "mps", "MPS share"
    TIMESLICE = "timeslice", "Time-sliced"


EXCLUSIVE_KINDS = (SliceKind.FULL, SliceKind.MIG)


class Node(models.Model):
    """One machine with GPUs; its name names its exported files and its workers."""

    name = models.SlugField(unique=True)
    hostname = models.CharField(max_length=200, blank=True)
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Gpu(models.Model):
    """A GPU of a node, by CUDA/NVML index; its model is one `labs.fleet.mig_profiles` knows."""

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="gpus")
    index = models.PositiveSmallIntegerField()
    model = models.CharField(max_length=40, help_text="A key of labs.fleet.mig_profiles.MODELS, e.g. h200-141gb")
    uuid = models.CharField(max_length=80, blank=True, help_text="GPU-… as nvidia-smi -L prints it")

    class Meta:
        ordering = ["node__name", "index"]
        constraints = [models.UniqueConstraint(fields=["node", "index"], name="one_gpu_per_index")]

    def __str__(self) -> str:
        return f"{self.node.name}/gpu{self.index} ({self.model})"


class Pool(models.Model):
    """A Celery queue `gpu.<name>` that workers on like slices consume; its lane comes from its slices."""

    name = models.CharField(max_length=60, unique=True, help_text="e.g. h200.mig3g; the queue is gpu.<name>")
    lane = models.CharField(max_length=10, choices=Lane.choices)
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.queue

    @property
    def queue(self) -> str:
        return f"gpu.{self.name}"


class Slice(models.Model):
    """A part of one GPU served by its own worker(s): the whole GPU, a MIG instance, an MPS share or a time-slice."""

    gpu = models.ForeignKey(Gpu, on_delete=models.CASCADE, related_name="slices")
    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="slices")
    kind = models.CharField(max_length=10, choices=SliceKind.choices)
    position = models.PositiveSmallIntegerField(default=0, help_text="order on the GPU, for names and drawings")
    mig_profile = models.CharField(max_length=20, blank=True)
    mig_placement = models.PositiveSmallIntegerField(null=True, blank=True, help_text="first memory slice")
    mig_uuid = models.CharField(max_length=80, blank=True, help_text="MIG-… once the instance exists")
    mps_thread_percent = models.PositiveSmallIntegerField(null=True, blank=True)
    mps_memory_limit_mib = models.PositiveIntegerField(null=True, blank=True)
    replicas = models.PositiveSmallIntegerField(default=1)

    class Meta:
        ordering = ["gpu__node__name", "gpu__index", "position"]

    def __str__(self) -> str:
        return f"{self.gpu.node.name}/gpu{self.gpu.index}/{self.label}"

    @property
    def label(self) -> str:
        if self.kind == SliceKind.MIG:
            return f"{self.mig_profile}@{self.mig_placement}"
        if self.kind == SliceKind.MPS:
            return f"mps{self.mps_thread_percent}"
        if self.kind == SliceKind.TIMESLICE:
            return f"timeslice×{self.replicas}"
        return "full"

    @property
    def exclusive(self) -> bool:
        return self.kind in EXCLUSIVE_KINDS


class Worker(models.Model):
    """One Celery worker the plan expects; its heartbeat (same name) says whether it is alive."""

    name = models.CharField(max_length=200, unique=True, help_text="the Celery node name, gpu.<pool>@<node>-…")
    slice = models.ForeignKey(Slice, on_delete=models.CASCADE, related_name="workers")
    replica = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
