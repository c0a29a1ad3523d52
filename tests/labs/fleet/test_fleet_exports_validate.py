"""Each export of a planned node passes its tool's check, and a broken one is caught by the same check."""

from __future__ import annotations

import pytest
import yaml

from labs.fleet import export_checks as checks
from labs.fleet import exports
from tests.labs.fleet.factories import h200_node

pytestmark = pytest.mark.django_db

MODELS = {0: "h200-141gb", 1: "h200-141gb", 2: "h200-141gb"}


def test_the_mig_parted_config_counts_each_gpus_profiles_and_passes_its_types():
    text = exports.mig_parted(h200_node()).text
    doc = yaml.safe_load(text)
    entries = doc["mig-configs"]["warplab-node1"]
    assert entries[0] == {"devices": [0], "mig-enabled": True, "mig-devices": {"3g.71gb": 1, "2g.35gb": 2}}
    assert entries[1] == {"devices": [1], "mig-enabled": False}
    assert "3g.71gb at memory slice 4" in text and "2g.35gb at memory slice 2" in text
    assert checks.check_mig_parted(text, MODELS) == []


def test_a_mig_parted_config_with_a_foreign_profile_or_a_typo_is_caught():
    bad = "version: v1\nmig-configs:\n  x:\n    - devices: [0]\n      mig-enabled: true\n"
    bad += "      mig-devices: {3g.40gb: 1}\n"
    assert checks.check_mig_parted(bad, MODELS) == ["device 0: 3g.40gb is not a MIG profile of NVIDIA H200 141GB"]
    typo = "version: v1\nmig-configs:\n  x:\n    - devices: [0]\n      mig-enable: true\n"
    assert any("mig-enable" in p for p in checks.check_mig_parted(typo, MODELS))


def test_the_device_plugin_config_uses_the_mixed_strategy_and_mps_replicas():
    text = exports.device_plugin(h200_node()).text
    doc = yaml.safe_load(text)
    assert doc["flags"] == {"migStrategy": "mixed"}
    assert doc["sharing"] == {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}}
    assert "equal share" in text and "both time-sliced and MPS" in text
    assert checks.check_device_plugin(text) == []
    assert checks.check_device_plugin("version: v1\nflags: {migStrategy: some}\n") != []


def test_the_compose_override_gives_each_worker_its_device_and_slice_and_its_check_accepts_it():
    """Checked by docker-compose where installed (./lab test installs it), else by the Compose spec's parser."""
    text = exports.compose_override(h200_node()).text
    services = yaml.safe_load(text)["services"]
    assert len(services) == 3 + 2 + 3
    mig = services["worker-node1-gpu0-s0"]
    assert mig["environment"]["CUDA_VISIBLE_DEVICES"].startswith("${MIG_NODE1_GPU0_S0:?")
    mps30 = services["worker-node1-gpu1-s0"]["environment"]
    assert mps30["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "30"
    assert mps30["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=40000M"
    assert mps30["CUDA_MPS_PIPE_DIRECTORY"] == "/tmp/nvidia-mps-node1-gpu1"
    assert services["worker-node1-gpu1-s0"]["ipc"] == "host"
    assert services["worker-node1-gpu2-s0-r2"]["command"][-1] == "gpu.h200.ts@node1-gpu2-s0-r2"
    assert checks.check_compose(text) == []
    broken = text.replace("restart: unless-stopped", "restart: unless-stopped\n    gpus_please: 1", 1)
    assert any("gpus_please" in p for p in checks.check_compose(broken))


def test_without_docker_compose_the_override_is_checked_by_the_compose_specs_parser():
    """`./lab up` installs no docker-compose: the export is still checked, merged over docker-compose.yml."""
    text = exports.compose_override(h200_node()).text
    assert checks.check_compose_spec(text) == []
    broken = text.replace("restart: unless-stopped", "restart: unless-stopped\n    gpus_please: 1", 1)
    (problem,) = checks.check_compose_spec(broken)
    assert problem.startswith("services.worker-node1-gpu0-s") and "gpus_please" in problem
    (problem,) = checks.check_compose_spec(text.replace("restart: unless-stopped", "restart: sometimes", 1))
    assert "unknown variant `sometimes`" in problem
    (problem,) = checks.check_compose_spec(text.replace("    image: ", "    x-image: ", 1))
    assert problem.endswith(": neither an image nor a build to run")
    assert checks.check_compose_spec("services: [1, 2]") != []


def test_the_kubernetes_manifests_are_a_deployment_per_pool_that_the_schema_accepts():
    h200_node()
    text = exports.kubernetes().text
    docs = list(yaml.safe_load_all(text))
    assert sorted(d["metadata"]["name"] for d in docs) == [
        "worker-h200-mig2g",
        "worker-h200-mig3g",
        "worker-h200-mps30",
        "worker-h200-mps70",
        "worker-h200-ts",
    ]
    mig2g = next(d for d in docs if d["metadata"]["name"] == "worker-h200-mig2g")
    assert mig2g["spec"]["replicas"] == 2
    assert mig2g["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/mig-2g.35gb": 1}}
    assert checks.check_kubernetes(text) == []
    (problem,) = checks.check_kubernetes(text.replace("replicas: 2", "replicas: two", 1))
    assert "replicas" in problem


def test_the_command_lines_start_and_quit_the_mps_daemon_and_parse_as_shell():
    text = exports.command_lines(h200_node()).text
    assert "nvidia-cuda-mps-control -d" in text and "trap 'echo quit | CUDA_MPS_PIPE_DIRECTORY=" in text
    assert "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=70 python -m gpu_worker serve --pool h200.mps70" in text
    assert checks.check_commands(text) == []
    assert checks.check_commands(text + "if then\n") != []


def test_each_exported_command_line_is_one_the_worker_accepts_with_settings_it_reads():
    import shlex

    from gpu_worker.cli import parser
    from gpu_worker.settings import WorkerSettings

    text = exports.command_lines(h200_node()).text
    lines = [line for line in text.splitlines() if " python -m gpu_worker serve " in line]
    assert len(lines) == 8
    for line in lines:
        words = shlex.split(line.rstrip(" &"))
        at = words.index("python")
        env = dict(w.split("=", 1) for w in words[:at])
        args = parser().parse_args(words[at + 3 :])
        assert args.pool and args.name.startswith(f"gpu.{args.pool}@node1-gpu")
        fields = {k.removeprefix("WARPLAB_").lower(): v for k, v in env.items() if k.startswith("WARPLAB_")}
        worker = WorkerSettings(**{k: v for k, v in fields.items() if not v.startswith("${")})
        assert worker.queue == f"gpu.{args.pool}" and worker.backend == "cuda" and worker.slice_kind
