"""The sandbox is built from a minimal set of read-only binds, a scrubbed environment and rlimits."""

from __future__ import annotations

import resource
import shutil

import pytest

from gpu_worker.isolation import sandbox
from gpu_worker.protocol import Limits

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


@needs_bwrap
def test_it_binds_a_minimal_read_only_set_not_the_whole_host():
    argv = sandbox.plan("sim", Limits(), ["3", "4"]).argv
    pairs = list(zip(argv, argv[1:], strict=False))
    assert ("--ro-bind", "/") not in pairs and ("--bind", "/") not in pairs
    for flag in ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert ("--tmpfs", "/tmp") in pairs and ("--chdir", "/tmp") in pairs
    assert argv[-3:] == ["gpu_worker.isolation.child", "3", "4"]


def test_its_environment_is_explicit_and_carries_only_cuda_slice_variables(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "x")
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://x")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-1234")
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", "/run/mps")
    env = sandbox.plan("cuda", Limits(), []).env
    assert "SECRET_KEY" not in env and "CELERY_BROKER_URL" not in env
    assert env["CUDA_VISIBLE_DEVICES"] == "MIG-1234" and env["CUDA_MPS_PIPE_DIRECTORY"] == "/run/mps"
    assert "NUMBA_ENABLE_CUDASIM" not in env and sandbox.plan("sim", Limits(), []).env["NUMBA_ENABLE_CUDASIM"] == "1"


def test_it_limits_address_space_on_the_simulator_only():
    limits = Limits(memory_mb=1024, processes=10, cpu_seconds=5, file_bytes=1000)
    sim = dict(sandbox.plan("sim", limits, [], extra_processes=256).limits)
    assert sim[resource.RLIMIT_AS] == 1024 * 1024 * 1024
    assert sim[resource.RLIMIT_NPROC] == 266 and sim[resource.RLIMIT_CPU] == 5
    assert sim[resource.RLIMIT_FSIZE] == 1000 and sim[resource.RLIMIT_CORE] == 0
    cuda = sandbox.plan("cuda", limits, [])
    assert resource.RLIMIT_AS not in dict(cuda.limits)
    assert "unlimited" in cuda.info["limits"]["memory_mb"]


def test_it_says_what_isolation_was_applied():
    info = sandbox.describe("sim", Limits())
    assert info["network"] is False and info["uid"] == 65534 and info["tool"] in ("bwrap", "unshare")
    assert info["limits"]["wall_seconds"] == Limits().wall_seconds


def test_a_job_may_name_its_own_child_entry_point_in_the_same_sandbox():
    argv = sandbox.plan("sim", Limits(), ["3", "4"], child_module="gpu_worker.datacenter.policy_child").argv
    assert argv[-4:] == ["-m", "gpu_worker.datacenter.policy_child", "3", "4"]
