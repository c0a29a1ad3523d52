"""The files an admin takes from the plan to the machines: nothing here touches a GPU.

Per node: a mig-parted configuration, the NVIDIA device plugin's sharing configuration, a
docker-compose override with one service per worker, and the shell command lines that start the
same workers without Docker (MPS control daemon included). Past one node: Kubernetes manifests, a
worker Deployment per pool requesting the device plugin's resources (`nvidia.com/gpu`, or
`nvidia.com/mig-1g.18gb` under the `mixed` MIG strategy). Each is checked by `fleet_export_checks`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import yaml

from labs.models.gpu import Gpu, Node, Pool, Slice, SliceKind, Worker

BROKER = "${WARPLAB_BROKER_URL:-redis://redis:6379/0}"
IMAGE = "warplab:latest"
MPS_PIPE_ROOT = "/tmp/nvidia-mps"
MPS_LOG_ROOT = "/tmp/nvidia-log"


@dataclass(frozen=True)
class Export:
    """One downloadable file."""

    kind: str
    filename: str
    content_type: str
    text: str


def _yaml(document: object, header: str) -> str:
    comment = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comment + yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


def _slices(node: Node) -> list[Slice]:
    return list(Slice.objects.filter(gpu__node=node).select_related("gpu", "pool").prefetch_related("workers"))


def mig_env_name(slice_: Slice) -> str:
    return f"MIG_{slice_.gpu.node.name.upper().replace('-', '_')}_GPU{slice_.gpu.index}_S{slice_.position}"


def mps_pipe(gpu: Gpu) -> str:
    return f"{MPS_PIPE_ROOT}-{gpu.node.name}-gpu{gpu.index}"


def slice_environment(slice_: Slice, *, in_container: bool) -> dict[str, str]:
    """The worker's environment for its slice: which device it sees, and its MPS share."""
    env = {"WARPLAB_BACKEND": "cuda", "WARPLAB_POOL": slice_.pool.name, "WARPLAB_SLICE_KIND": slice_.kind}
    if slice_.kind == SliceKind.MIG:
        env["CUDA_VISIBLE_DEVICES"] = slice_.mig_uuid or (
            f"${{{mig_env_name(slice_)}:?the MIG UUID of {slice_.mig_profile} at {slice_.mig_placement} on GPU "
            f"{slice_.gpu.index} (nvidia-smi -L), or record it in the planner}}"
        )
    else:
        env["CUDA_VISIBLE_DEVICES"] = "0" if in_container else str(slice_.gpu.index)
    if slice_.kind == SliceKind.MPS:
        env["CUDA_MPS_PIPE_DIRECTORY"] = mps_pipe(slice_.gpu)
        env["CUDA_MPS_LOG_DIRECTORY"] = mps_pipe(slice_.gpu).replace(MPS_PIPE_ROOT, MPS_LOG_ROOT)
        env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(slice_.mps_thread_percent)
        if slice_.mps_memory_limit_mib:
            env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = f"0={slice_.mps_memory_limit_mib}M"
    return env


def mig_parted(node: Node) -> Export:
    """mig-parted's config: per GPU whether MIG is on and how many instances of each profile."""
    entries = []
    placements = []
    for gpu in node.gpus.all():
        slices = [s for s in gpu.slices.all() if s.kind == SliceKind.MIG]
        if not slices:
            entries.append({"devices": [gpu.index], "mig-enabled": False})
            continue
        counts: dict[str, int] = {}
        for s in slices:
            counts[s.mig_profile] = counts.get(s.mig_profile, 0) + 1
            placements.append(f"GPU {gpu.index}: {s.mig_profile} at memory slice {s.mig_placement} ({s.pool.queue})")
        entries.append({"devices": [gpu.index], "mig-enabled": True, "mig-devices": counts})
    header = (
        f"mig-parted configuration for node {node.name}, exported by WarpLab's planner.\n"
        f"Apply on the node: nvidia-mig-parted apply -f this-file -c warplab-{node.name}\n"
        "mig-parted chooses placements itself; the planner's placements, for checking with nvidia-smi mig -lgi:\n"
        + "\n".join(f"  {p}" for p in placements)
    )
    doc = {"version": "v1", "mig-configs": {f"warplab-{node.name}": entries}}
    return Export("mig-parted", f"{node.name}-mig-parted.yaml", "application/yaml", _yaml(doc, header))


def device_plugin(node: Node) -> Export:
    """The device plugin's config file: its MIG strategy and sharing (time-slicing replicas, or MPS)."""
    slices = _slices(node)
    kinds = {s.kind for s in slices}
    notes = []
    doc: dict = {"version": "v1", "flags": {"migStrategy": "mixed" if SliceKind.MIG in kinds else "none"}}
    timeslice = [s for s in slices if s.kind == SliceKind.TIMESLICE]
    mps = [s for s in slices if s.kind == SliceKind.MPS]
    if timeslice and mps:
        notes.append("This node has both time-sliced and MPS GPUs: the plugin shares one way per config; MPS kept.")
    if mps:
        count = max(sum(1 for s in mps if s.gpu_id == g) for g in {s.gpu_id for s in mps})
        shares = sorted({s.mps_thread_percent for s in mps})
        if len(shares) > 1:
            notes.append(f"The plugin gives each of its {count} MPS replicas an equal share; the plan's are {shares}%.")
        doc["sharing"] = {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": count}]}}
    elif timeslice:
        replicas = max(s.replicas for s in timeslice)
        doc["sharing"] = {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": replicas}]}}
    header = f"NVIDIA device plugin configuration for node {node.name} (k8s-device-plugin config v1).\n" + "\n".join(
        notes
    )
    return Export("device-plugin", f"{node.name}-device-plugin.yaml", "application/yaml", _yaml(doc, header))


def _service(worker: Worker) -> dict:
    s = worker.slice
    env = {"WARPLAB_BROKER_URL": BROKER, **slice_environment(s, in_container=True)}
    device_ids = [s.mig_uuid] if s.kind == SliceKind.MIG and s.mig_uuid else [str(s.gpu.index)]
    service: dict = {
        "image": IMAGE,
        "command": ["python", "-m", "gpu_worker", "serve", "--pool", s.pool.name, "--name", worker.name],
        "environment": env,
        "cap_add": ["SYS_ADMIN"],  # bubblewrap makes namespaces for the learner's sandbox
        "security_opt": ["seccomp=unconfined", "apparmor=unconfined"],
        "deploy": {
            "resources": {
                "reservations": {
                    "devices": [
                        {"driver": "nvidia", "device_ids": device_ids, "capabilities": ["gpu", "compute", "utility"]}
                    ]
                }
            }
        },
        "restart": "unless-stopped",
    }
    if s.kind == SliceKind.MPS:
        service["ipc"] = "host"  # MPS clients share the control daemon's IPC namespace
        pipe = env["CUDA_MPS_PIPE_DIRECTORY"]
        service["volumes"] = [f"{pipe}:{pipe}", f"{env['CUDA_MPS_LOG_DIRECTORY']}:{env['CUDA_MPS_LOG_DIRECTORY']}"]
    return service


def service_name(worker: Worker) -> str:
    return "worker-" + worker.name.split("@", 1)[1]


def compose_override(node: Node) -> Export:
    """A docker-compose override: one GPU worker service per planned worker, with its device and slice."""
    workers = Worker.objects.filter(slice__gpu__node=node).select_related("slice__gpu__node", "slice__pool")
    doc = {"services": {service_name(w): _service(w) for w in workers}}
    header = (
        f"docker-compose override for node {node.name}: docker compose -f docker-compose.yml -f this-file up -d\n"
        "MPS services need the node's MPS control daemon running first (see the node's command lines)."
    )
    return Export("compose", f"{node.name}-compose.override.yaml", "application/yaml", _yaml(doc, header))


def command_lines(node: Node) -> Export:
    """The shell lines that start this node's workers without Docker, MPS daemons started and quit around them."""
    lines = ["#!/bin/sh", f"# WarpLab workers of node {node.name}, exported by the planner; run on it.", "set -eu"]
    mps_gpus = {s.gpu for s in _slices(node) if s.kind == SliceKind.MPS}
    for gpu in sorted(mps_gpus, key=lambda g: g.index):
        pipe, logs = mps_pipe(gpu), mps_pipe(gpu).replace(MPS_PIPE_ROOT, MPS_LOG_ROOT)
        lines += [
            f"mkdir -p {pipe} {logs}",
            f"CUDA_VISIBLE_DEVICES={gpu.index} CUDA_MPS_PIPE_DIRECTORY={pipe} CUDA_MPS_LOG_DIRECTORY={logs} "
            "nvidia-cuda-mps-control -d",
            f"trap 'echo quit | CUDA_MPS_PIPE_DIRECTORY={pipe} nvidia-cuda-mps-control' EXIT",
        ]
    workers = Worker.objects.filter(slice__gpu__node=node).select_related("slice__gpu__node", "slice__pool")
    for w in workers:
        env = {"WARPLAB_BROKER_URL": "${WARPLAB_BROKER_URL}", **slice_environment(w.slice, in_container=False)}
        assignments = " ".join(f"{k}={_shell(v)}" for k, v in env.items())
        lines.append(f"{assignments} python -m gpu_worker serve --pool {w.slice.pool.name} --name {w.name} &")
    lines.append("wait")
    return Export("commands", f"{node.name}-workers.sh", "text/x-shellscript", "\n".join(lines) + "\n")


def _shell(value: str) -> str:
    return f'"{value}"' if value.startswith("${") else shlex.quote(value)


def _resource(slice_: Slice) -> str:
    return f"nvidia.com/mig-{slice_.mig_profile}" if slice_.kind == SliceKind.MIG else "nvidia.com/gpu"


def kubernetes(namespace: str = "warplab") -> Export:
    """A worker Deployment per pool, on NVIDIA's GPU operator (MIG strategy mixed), one replica per planned worker."""
    docs = []
    for pool in Pool.objects.prefetch_related("slices__workers", "slices__gpu__node"):
        slices = list(pool.slices.all())
        if not slices:
            continue
        first = slices[0]
        replicas = sum(s.workers.count() for s in slices)
        hosts = sorted({s.gpu.node.hostname or s.gpu.node.name for s in slices})
        env = {k: v for k, v in slice_environment(first, in_container=True).items() if not k.startswith("CUDA_VISIBLE")}
        name = "worker-" + pool.name.replace(".", "-")
        labels = {"app.kubernetes.io/name": "warplab-worker", "warplab/pool": pool.name.replace(".", "-")}
        container = {
            "name": "worker",
            "image": IMAGE,
            "command": ["python", "-m", "gpu_worker", "serve", "--pool", pool.name],
            "env": [{"name": "WARPLAB_BROKER_URL", "value": "redis://redis:6379/0"}]
            + [{"name": k, "value": v} for k, v in env.items()],
            "resources": {"limits": {_resource(first): 1}},
            "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}},
        }
        affinity = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": hosts}]}
                    ]
                }
            }
        }
        docs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {"containers": [container], "affinity": affinity},
                    },
                },
            }
        )
    header = (
        "WarpLab GPU workers on Kubernetes, one Deployment per pool, exported by the planner.\n"
        "Needs NVIDIA's GPU operator with MIG strategy mixed and each node's device-plugin config."
    )
    text = _yaml(docs[0], header) + "".join("---\n" + _yaml(d, "") for d in docs[1:]) if docs else ""
    return Export("kubernetes", "warplab-workers.k8s.yaml", "application/yaml", text)


NODE_EXPORTS = {
    "mig-parted": mig_parted,
    "device-plugin": device_plugin,
    "compose": compose_override,
    "commands": command_lines,
}
