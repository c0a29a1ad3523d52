"""The per-GPU timing lock (no GPU needed): one holder at a time, across processes and inherited descriptors."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from gpu_worker.measurement import gpu_lock


def test_the_lock_file_sits_in_tmp_named_by_the_uuid(tmp_path):
    assert gpu_lock.lock_path("GPU-ab/cd", str(tmp_path)) == str(tmp_path / "warplab-gpu-GPU-ab_cd.lock")


def test_a_second_holder_waits_and_then_times_out(tmp_path):
    lock = gpu_lock.GpuLock("GPU-x", str(tmp_path))
    with lock.hold(timeout=1):
        code = textwrap.dedent(
            f"""
            from gpu_worker.measurement import gpu_lock
            try:
                with gpu_lock.GpuLock("GPU-x", {str(tmp_path)!r}).hold(timeout=0.3):
                    print("got it")
            except gpu_lock.LockTimeout:
                print("timed out")
            """
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "timed out"


def test_the_lock_is_free_again_after_its_holder_leaves(tmp_path):
    lock = gpu_lock.GpuLock("GPU-y", str(tmp_path))
    with lock.hold(timeout=1):
        pass
    with lock.hold(timeout=0.1) as waited:
        assert waited < 0.1


def test_a_child_locks_through_an_inherited_descriptor(tmp_path, monkeypatch):
    fd = gpu_lock.open_lock_fd("GPU-z", str(tmp_path))
    code = textwrap.dedent(
        """
        from gpu_worker.measurement import gpu_lock
        with gpu_lock.timing_lock("GPU-z", timeout=1) as waited:
            print("inherited ok")
        """
    )
    env = {**os.environ, gpu_lock.LOCK_FD_ENV: str(fd), gpu_lock.LOCK_DIR_ENV: "/nonexistent"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, pass_fds=(fd,))
    os.close(fd)
    assert out.stdout.strip() == "inherited ok", out.stderr


def test_an_inherited_lock_excludes_other_holders(tmp_path):
    fd = gpu_lock.open_lock_fd("GPU-w", str(tmp_path))
    other = gpu_lock.GpuLock("GPU-w", str(tmp_path))
    with gpu_lock.locked(fd, timeout=1), pytest.raises(gpu_lock.LockTimeout), other.hold(timeout=0.2):
        pass
    os.close(fd)
