"""Every state change of the fleet plan: nodes, GPUs, pools, and a GPU's layout of slices with their workers.

`lay_out` replaces one GPU's slices in a transaction after `fleet_plan` has checked the whole layout,
so no impossible layout is ever saved (the admin's pages, the Django admin and tests all call it).
A pool takes one lane: its slices are all exclusive (graded) or all shared (practice).
"""

from __future__ import annotations

import re

from django.db import transaction

from labs.fleet.plan import LayoutError, SliceSpec, check_layout, place, require_model
from labs.models.gpu import EXCLUSIVE_KINDS, Gpu, Lane, Node, Pool, Slice, SliceKind, Worker

POOL_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{0,58}$")


def add_node(name: str, hostname: str = "", notes: str = "") -> Node:
    node, _ = Node.objects.update_or_create(name=name, defaults={"hostname": hostname, "notes": notes})
    return node


def add_gpu(node: Node, index: int, model: str, uuid: str = "") -> Gpu:
    """A GPU of a known model (an unknown one is refused, naming the models the planner knows)."""
    known = require_model(model)
    gpu, _ = Gpu.objects.update_or_create(node=node, index=index, defaults={"model": known.key, "uuid": uuid})
    return gpu


def lane_of(kind: str) -> str:
    return Lane.EXCLUSIVE if kind in EXCLUSIVE_KINDS else Lane.SHARED


def pool_for(name: str, kind: str, description: str = "") -> Pool:
    """The pool `name`, made for `kind`'s lane if new; one of the other lane is refused."""
    if not POOL_NAME.match(name):
        words = "lower-case letters, digits, dots and dashes (e.g. h200.mig3g)"
        raise LayoutError([f"A pool name is {words}; got '{name}'."])
    lane = lane_of(kind)
    pool, created = Pool.objects.get_or_create(name=name, defaults={"lane": lane, "description": description})
    if not created and pool.lane != lane:
        raise LayoutError(
            [f"Pool {pool.queue} is {pool.get_lane_display().lower()}; a {kind} slice belongs to a {lane} pool."]
        )
    return pool


def specs_of(gpu: Gpu) -> list[SliceSpec]:
    """The GPU's saved layout as the planner reads it."""
    return [
        SliceSpec(
            kind=s.kind,
            pool=s.pool.name,
            profile=s.mig_profile,
            placement=s.mig_placement,
            thread_percent=s.mps_thread_percent,
            memory_limit_mib=s.mps_memory_limit_mib,
            replicas=s.replicas,
        )
        for s in gpu.slices.select_related("pool")
    ]


def worker_name(slice_: Slice, replica: int) -> str:
    """gpu.<pool>@<node>-gpu<i>-s<position>[-r<replica>]: unique, and it says where the worker runs."""
    tail = f"-r{replica}" if slice_.kind == SliceKind.TIMESLICE else ""
    return f"{slice_.pool.queue}@{slice_.gpu.node.name}-gpu{slice_.gpu.index}-s{slice_.position}{tail}"


@transaction.atomic
def lay_out(gpu: Gpu, specs: list[SliceSpec]) -> list[Slice]:
    """Replace `gpu`'s slices by `specs` (MIG starts left blank are placed), or raise LayoutError saying why."""
    placed = place(gpu.model, specs)
    problems = check_layout(gpu.model, placed)
    if problems:
        raise LayoutError(problems)
    old_pools = set(gpu.slices.values_list("pool_id", flat=True))
    gpu.slices.all().delete()
    made = []
    for position, spec in enumerate(placed):
        pool = pool_for(spec.pool, spec.kind)
        slice_ = Slice.objects.create(
            gpu=gpu,
            pool=pool,
            kind=spec.kind,
            position=position,
            mig_profile=spec.profile if spec.kind == SliceKind.MIG else "",
            mig_placement=spec.placement if spec.kind == SliceKind.MIG else None,
            mps_thread_percent=spec.thread_percent if spec.kind == SliceKind.MPS else None,
            mps_memory_limit_mib=spec.memory_limit_mib if spec.kind == SliceKind.MPS else None,
            replicas=spec.replicas if spec.kind == SliceKind.TIMESLICE else 1,
        )
        for replica in range(slice_.replicas):
            Worker.objects.create(name=worker_name(slice_, replica), slice=slice_, replica=replica)
        made.append(slice_)
    _drop_empty_pools(old_pools)
    return made


def _drop_empty_pools(pool_ids: set[int]) -> None:
    Pool.objects.filter(pk__in=pool_ids, slices__isnull=True).delete()


@transaction.atomic
def remove_gpu(gpu: Gpu) -> None:
    pools = set(gpu.slices.values_list("pool_id", flat=True))
    gpu.delete()
    _drop_empty_pools(pools)


def set_mig_uuid(slice_: Slice, uuid: str) -> Slice:
    """Record the MIG device's UUID once the admin has created the instance (nvidia-smi -L prints it)."""
    if slice_.kind != SliceKind.MIG:
        raise LayoutError([f"{slice_} is not a MIG instance; only MIG instances have MIG UUIDs."])
    if not re.match(r"^MIG-[0-9a-fA-F-]{8,}$", uuid):
        raise LayoutError([f"A MIG device UUID looks like MIG-xxxxxxxx-…; got '{uuid}'."])
    slice_.mig_uuid = uuid
    slice_.save(update_fields=["mig_uuid"])
    return slice_
