"""A job that needs several GPUs: declared in lab.yaml, refused by a worker that owns fewer, sandboxed for NCCL."""

from __future__ import annotations

import resource
import shutil
from pathlib import Path

import pytest

from gpu_worker.exercise.labspec import LabError, load_lab
from gpu_worker.isolation import placement, sandbox
from gpu_worker.protocol import Limits

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
RING = Path(__file__).resolve().parents[2] / "labs" / "content" / "05-multi-gpu" / "ring-all-gather"


def _lab_with(tmp_path: Path, extra: str) -> Path:
    folder = tmp_path / "05-multi-gpu" / "ring-all-gather"
    shutil.copytree(RING, folder)
    (tmp_path / "05-multi-gpu" / "module.yaml").write_text("number: 5\nslug: multi-gpu\ntitle: Multi-GPU\n")
    spec = (folder / "lab.yaml").read_text().replace("limits:\n  wall_seconds: 30\n", extra)
    (folder / "lab.yaml").write_text(spec)
    return folder


def test_a_lab_declares_how_many_gpus_a_run_needs(tmp_path):
    lab = load_lab(_lab_with(tmp_path, "limits:\n  wall_seconds: 30\n  gpus: 2\npool: gpu.h200.x2\n"))
    assert lab.spec.limits.gpus == 2
    assert lab.exercise_ref("numba").limits.gpus == 2


def test_a_lab_needing_two_gpus_without_a_pool_fails_naming_the_field(tmp_path):
    with pytest.raises(LabError, match="field 'pool'"):
        load_lab(_lab_with(tmp_path, "limits:\n  wall_seconds: 30\n  gpus: 2\n"))


@pytest.mark.parametrize("gpus", [0, 9])
def test_a_gpu_count_outside_one_to_eight_fails_naming_the_field(tmp_path, gpus):
    with pytest.raises(LabError, match="limits.gpus"):
        load_lab(_lab_with(tmp_path, f"limits:\n  wall_seconds: 30\n  gpus: {gpus}\npool: gpu.x\n"))


def test_a_worker_owns_its_visible_devices_or_as_many_as_it_declares():
    assert placement.worker_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert placement.worker_gpus({}, declared=4) == ["0", "1", "2", "3"]


def test_a_worker_refuses_a_job_needing_more_gpus_than_it_owns_and_says_why():
    assert placement.refusal(1, "cuda", 1) is None
    assert placement.refusal(2, "cuda", 2) is None
    message = placement.refusal(4, "cuda", 2)
    assert "needs 4 GPUs and this worker owns 2" in message and "Nothing of your code ran" in message
    assert "simulator" in placement.refusal(2, "sim", 8)


@needs_bwrap
def test_a_two_gpu_job_gets_two_devices_nccl_on_loopback_shared_memory_and_threads_for_its_ranks(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    one, two = sandbox.plan("cuda", Limits(), []), sandbox.plan("cuda", Limits(gpus=2), [])
    assert two.env["CUDA_VISIBLE_DEVICES"] == "0,1" and two.info["gpus"] == "0,1"
    assert two.env["NCCL_SOCKET_IFNAME"] == "lo" and two.env["NCCL_IB_DISABLE"] == "1"
    assert "NCCL_SOCKET_IFNAME" not in one.env and one.env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert ("--tmpfs", "/dev/shm") in list(zip(two.argv, two.argv[1:], strict=False))
    assert "--unshare-net" in two.argv  # still no network: NCCL stays inside the node
    nproc = {dict(p.limits)[resource.RLIMIT_NPROC] for p in (one, two)}
    assert max(nproc) - min(nproc) == placement.THREADS_PER_RANK


@pytest.mark.gpu
def test_nccl_all_reduces_across_every_gpu_inside_a_jobs_sandbox():
    cupy = pytest.importorskip("cupy")
    count = cupy.cuda.runtime.getDeviceCount()
    if count < 2:
        pytest.skip(f"{count} GPU: an all-reduce across GPUs needs two")
    from gpu_worker.isolation.nccl_child import probe

    facts = probe(count)
    assert "error" not in facts, facts
    assert facts["n"] == count and facts["wrong"] == 0
