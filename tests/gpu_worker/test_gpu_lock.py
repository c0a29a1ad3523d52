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
    with gpu_lock.locked(fd, timeout=1):
        assert _try_in_a_process(tmp_path, "GPU-w", "exclusive", 0.2) == "timed out"
    os.close(fd)


def _try_in_a_process(tmp_path, uuid: str, kind: str, timeout: float) -> str:
    """Another process asks for the lock as `kind`: 'got it' or 'timed out'."""
    code = textwrap.dedent(
        f"""
        from gpu_worker.measurement import gpu_lock
        try:
            with gpu_lock.GpuLock({uuid!r}, {str(tmp_path)!r}).hold(timeout={timeout}, kind={kind!r}):
                print("got it")
        except gpu_lock.LockTimeout:
            print("timed out")
        """
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_correctness_work_shares_the_gpu_but_never_with_a_timing(tmp_path):
    lock = gpu_lock.GpuLock("GPU-s", str(tmp_path))
    with lock.hold(timeout=1, kind=gpu_lock.SHARED):
        assert _try_in_a_process(tmp_path, "GPU-s", "shared", 0.3) == "got it"
        assert _try_in_a_process(tmp_path, "GPU-s", "exclusive", 0.3) == "timed out"
    with lock.hold(timeout=1):
        assert _try_in_a_process(tmp_path, "GPU-s", "shared", 0.3) == "timed out"
    assert _try_in_a_process(tmp_path, "GPU-s", "exclusive", 0.3) == "got it"


def test_a_waiting_timing_goes_before_the_checks_that_come_after_it(tmp_path):
    # a check holds the GPU; a timing waits for it; a later check must wait behind the timing (writer first),
    # or a class's stream of checks would keep the timings out forever
    import time

    timing = textwrap.dedent(
        f"""
        import time
        from gpu_worker.measurement import gpu_lock
        with gpu_lock.GpuLock("GPU-g", {str(tmp_path)!r}).hold(timeout=30):
            print("timing in", flush=True)
            time.sleep(0.5)
        print("timing out", flush=True)
        """
    )
    lock = gpu_lock.GpuLock("GPU-g", str(tmp_path))
    with lock.hold(timeout=1, kind=gpu_lock.SHARED):
        waiter = subprocess.Popen([sys.executable, "-c", timing], stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)  # long enough for the timing to start and wait at the gate
        assert _try_in_a_process(tmp_path, "GPU-g", "shared", 0.3) == "timed out"  # held back by the waiting timing
    assert waiter.stdout is not None
    assert waiter.stdout.readline().strip() == "timing in"  # this check's leaving let the timing in
    assert _try_in_a_process(tmp_path, "GPU-g", "shared", 5) == "got it"  # and the checks come after it
    assert waiter.stdout.readline().strip() == "timing out"
    waiter.wait(10)


def test_shared_inside_exclusive_is_free_and_exclusive_inside_shared_is_refused(tmp_path):
    lock = gpu_lock.GpuLock("GPU-n", str(tmp_path))
    with lock.hold(timeout=1):
        with lock.hold(timeout=1, kind=gpu_lock.SHARED) as waited:
            assert waited == 0.0
        assert _try_in_a_process(tmp_path, "GPU-n", "shared", 0.2) == "timed out"  # still held alone
    with lock.hold(timeout=1, kind=gpu_lock.SHARED), pytest.raises(RuntimeError, match="exclusive"), lock.hold(1):
        pass
    assert _try_in_a_process(tmp_path, "GPU-n", "exclusive", 0.3) == "got it"  # nothing stayed locked


def test_a_blocked_wait_times_out_and_leaves_no_timer_or_handler_behind(tmp_path):
    # in a process of its own: pytest-timeout owns SIGALRM here, so this process would poll instead
    code = textwrap.dedent(
        f"""
        import signal
        from gpu_worker.measurement import gpu_lock
        assert gpu_lock._may_block_with_a_timer()  # the main thread waits in the kernel, not by polling
        try:
            with gpu_lock.GpuLock("GPU-v", {str(tmp_path)!r}).hold(timeout=0.2):
                print("got it")
        except gpu_lock.LockTimeout:
            print("timed out")
        print(signal.getsignal(signal.SIGALRM) == signal.SIG_DFL, signal.getitimer(signal.ITIMER_REAL)[0])
        """
    )
    with gpu_lock.GpuLock("GPU-v", str(tmp_path)).hold(timeout=1):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split("\n")[:2] == ["timed out", "True 0.0"], out.stderr
    with gpu_lock.GpuLock("GPU-v", str(tmp_path)).hold(timeout=0.5) as waited:  # nothing stayed locked
        assert waited < 0.5


def test_a_waiter_off_the_main_thread_polls_and_still_gets_the_lock(tmp_path):
    import threading

    fd = gpu_lock.open_lock_fd("GPU-u", str(tmp_path))
    got: list[float] = []

    def wait() -> None:
        assert not gpu_lock._may_block_with_a_timer()
        with gpu_lock.GpuLock("GPU-u", str(tmp_path)).hold(timeout=5) as waited:
            got.append(waited)

    with gpu_lock.locked(fd, timeout=1):
        waiter = threading.Thread(target=wait)
        waiter.start()
        waiter.join(0.2)
        assert waiter.is_alive() and not got  # held here, so the thread waits
    waiter.join(5)
    assert got and got[0] >= 0.2
    os.close(fd)


def test_a_blocked_waiter_gets_the_lock_once_its_holder_lets_go(tmp_path):
    import time

    code = textwrap.dedent(
        f"""
        from gpu_worker.measurement import gpu_lock
        with gpu_lock.GpuLock("GPU-t", {str(tmp_path)!r}).hold(timeout=30) as waited:
            print("got it")
        """
    )
    with gpu_lock.GpuLock("GPU-t", str(tmp_path)).hold(timeout=1):
        waiter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)  # long enough for the waiter to start and block
    out, _ = waiter.communicate(timeout=30)
    assert out.strip() == "got it"


def test_the_benchmarks_before_switch_lets_checks_run_inside_a_timing(tmp_path, monkeypatch):
    monkeypatch.setenv(gpu_lock.LOCK_DIR_ENV, str(tmp_path))
    code = textwrap.dedent(
        """
        from gpu_worker.measurement import gpu_lock
        try:
            with gpu_lock.sharing_lock("GPU-b", timeout=0.2):
                print("in")
        except gpu_lock.LockTimeout:
            print("timed out")
        """
    )

    def check() -> str:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()

    with gpu_lock.GpuLock("GPU-b", str(tmp_path)).hold(timeout=1):
        assert check() == "timed out"
        monkeypatch.setenv(gpu_lock.CHECKS_BESIDE_TIMINGS_ENV, "1")
        assert check() == "in"


def test_a_timing_s_release_is_stamped_for_the_next_exclusive_holder_in_another_process(tmp_path):
    import time

    code = textwrap.dedent(
        f"""
        from gpu_worker.measurement import gpu_lock
        with gpu_lock.GpuLock("GPU-s", {str(tmp_path)!r}).hold(timeout=1):
            pass
        """
    )
    before = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    lock = gpu_lock.GpuLock("GPU-s", str(tmp_path))
    with lock.hold(timeout=1, kind=gpu_lock.SHARED):
        assert gpu_lock.last_timing_end() < before  # a shared holder does not read the stamp
    with lock.hold(timeout=1):
        seen = gpu_lock.last_timing_end()
    assert before < seen < time.monotonic()
    with gpu_lock.GpuLock("GPU-t", str(tmp_path)).hold(timeout=1):  # a GPU no timing has let go of yet
        assert gpu_lock.last_timing_end() == -float("inf")


def test_the_checks_alone_switch_keeps_other_checks_out_and_stamps_no_timing(tmp_path, monkeypatch):
    import time

    monkeypatch.setenv(gpu_lock.LOCK_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(gpu_lock.CHECKS_ALONE_ENV, "1")
    before = time.monotonic()
    with gpu_lock.sharing_lock("GPU-a", timeout=1):
        assert _try_in_a_process(tmp_path, "GPU-a", "shared", 0.3) == "timed out"  # alone, not shared
    with gpu_lock.GpuLock("GPU-a", str(tmp_path)).hold(timeout=1):
        assert gpu_lock.last_timing_end() < before  # a check alone is no timing: the next warm-up stays whole
    monkeypatch.delenv(gpu_lock.CHECKS_ALONE_ENV)
    with gpu_lock.sharing_lock("GPU-a", timeout=1):
        assert _try_in_a_process(tmp_path, "GPU-a", "shared", 0.3) == "got it"
