"""Each job gets its own cgroup, a capped /tmp, a syscall filter and a uid of its own, and its description says so."""

from __future__ import annotations

import shutil

import pytest

from gpu_worker.isolation import cgroups, sandbox, syscall_filter, uid_pool
from gpu_worker.protocol import Limits

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


@pytest.fixture
def fresh_probe():
    cgroups.available.cache_clear()
    yield
    cgroups.available.cache_clear()


@needs_bwrap
def test_the_plan_filters_syscalls_and_caps_tmp_and_says_so():
    planned = sandbox.plan("sim", Limits(tmp_mb=100), [])
    pairs = list(zip(planned.argv, planned.argv[1:], strict=False))
    if syscall_filter.program() is not None:
        assert ("--seccomp", sandbox.SECCOMP_FD) in pairs and planned.info["seccomp"].startswith("denies")
    if sandbox._bwrap_has("--size"):
        assert ("--size", str(100 << 20)) in pairs and planned.info["tmp_mb"] == 100


@needs_bwrap
def test_without_libseccomp_the_plan_has_no_filter_and_says_so(monkeypatch):
    monkeypatch.setattr(syscall_filter, "program", lambda: None)
    planned = sandbox.plan("sim", Limits(), [])
    assert "--seccomp" not in planned.argv and planned.info["seccomp"].startswith("none")


def test_a_worker_without_cgroups_falls_back_to_rlimits_and_says_so(monkeypatch, fresh_probe):
    monkeypatch.setenv(cgroups.DISABLE_ENV, "0")
    info = sandbox.describe("sim", Limits())
    assert info["containment"].startswith("rlimits only") and "cgroup" not in info


def test_a_job_cgroup_bounds_memory_and_processes_and_is_removed(fresh_probe):
    where = cgroups.available()
    if where is None:
        pytest.skip("this worker may make no cgroup")
    job = cgroups.JobCgroup.create(where, memory_bytes=256 << 20, pids=20, cpus=1.0)
    folders = list(job.folders)
    assert all(f.is_dir() for f in folders)
    job.remove()
    assert not any(f.exists() for f in folders)


@pytest.mark.skipif(not uid_pool.LOCK_DIR.parent.exists(), reason="no folder for the uid locks")
def test_two_running_jobs_get_two_uids_and_a_released_uid_is_leased_again():
    first, second = uid_pool.lease(), uid_pool.lease()
    try:
        assert first.uid != second.uid and {first.uid, second.uid} <= set(uid_pool.uid_range())
        uid = first.uid
        first.release()
        again = uid_pool.lease()
        assert again.uid == uid
        again.release()
    finally:
        first.release()
        second.release()


def test_the_cgroup_of_a_job_whose_worker_died_is_removed_at_the_next_start(fresh_probe):
    where = cgroups.available()
    if where is None:
        pytest.skip("this worker may make no cgroup")
    cgroups.available.cache_clear()
    orphans = [parent / "warplab-job-999999999-1" for parent in where.parents.values()]  # no such pid
    for folder in orphans:
        folder.mkdir()
    assert cgroups.available() == where
    assert not any(folder.exists() for folder in orphans)


def test_on_cgroup_v2_a_job_gets_memory_without_swap_pids_and_a_cpu_quota(tmp_path):
    where = cgroups.Where(2, {"": tmp_path})  # a plain folder stands in for a delegated cgroup v2 parent
    job = cgroups.JobCgroup.create(where, memory_bytes=512 << 20, pids=40, cpus=1.5)
    (folder,) = job.folders
    written = {f.name: f.read_text() for f in folder.iterdir()}
    assert written == {
        "memory.max": str(512 << 20),
        "memory.swap.max": "0",
        "pids.max": "40",
        "cpu.max": "150000 100000",
    }
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n")
    assert job.oom_kills() == 2


def test_a_jobs_cpu_seconds_come_from_its_cgroup_on_either_version(tmp_path):
    v2 = cgroups.JobCgroup(cgroups.Where(2, {"": tmp_path}), [tmp_path / "v2"])
    v1 = cgroups.JobCgroup(cgroups.Where(1, {"cpu": tmp_path}), [tmp_path / "v1-memory", tmp_path / "v1-cpu"])
    for folder in (*v2.folders, *v1.folders):
        folder.mkdir()
    assert v2.cpu_seconds() is None and v1.cpu_seconds() is None  # nothing counted: no figure, not zero
    (tmp_path / "v2" / "cpu.stat").write_text("usage_usec 2750000\nuser_usec 2000000\nsystem_usec 750000\n")
    (tmp_path / "v1-cpu" / "cpuacct.usage").write_text("1500000000\n")  # nanoseconds, where cpuacct shares cpu's
    assert v2.cpu_seconds() == 2.75
    assert v1.cpu_seconds() == 1.5


@pytest.mark.parametrize("together", [True, False], ids=["cpu,cpuacct", "cpuacct apart"])
def test_on_cgroup_v1_a_job_gets_a_cpuacct_folder_unless_cpu_s_is_the_same(tmp_path, monkeypatch, together):
    for controller in ("memory", "pids", *(["cpu,cpuacct"] if together else ["cpu", "cpuacct"])):
        (tmp_path / controller / "worker").mkdir(parents=True)
        (tmp_path / controller / "cgroup.procs").write_text("")
    if together:  # as systemd mounts them
        (tmp_path / "cpu").symlink_to("cpu,cpuacct")
        (tmp_path / "cpuacct").symlink_to("cpu,cpuacct")
    monkeypatch.setattr(cgroups, "ROOT", tmp_path)
    monkeypatch.setattr(cgroups, "_own_paths", lambda: dict.fromkeys(("memory", "pids", "cpu", "cpuacct"), "/worker"))
    parents = cgroups._v1_parents()
    assert parents is not None
    assert set(parents) == {"memory", "pids", "cpu"} | (set() if together else {"cpuacct"})


# A helper process burns CPU and is left running: it dies with the job's PID namespace, never reaped by the
# learner's code. The module waits until the helper has used BURNT seconds, by the kernel's own count.
BURNT = 0.6
LEFT_RUNNING = f"""
import os, subprocess, sys, time
helper = subprocess.Popen([sys.executable, "-c", "while True: pass"])
def used():
    fields = open(f"/proc/{{helper.pid}}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
while used() < {BURNT}:
    time.sleep(0.02)
print("helper used", used())
"""


@needs_bwrap
def test_a_jobs_cpu_seconds_count_a_process_it_left_running(fresh_probe):
    from engine_factories import alices_job, module_with, run

    where = cgroups.available()
    trial = cgroups.JobCgroup.create(where, 64 << 20, 8, 1.0) if where is not None else None
    counts = trial is not None and trial.cpu_seconds() is not None
    if trial is not None:
        trial.remove()
    if not counts:
        pytest.skip("no cgroup here counts CPU time")
    result = run(alices_job(module_with(LEFT_RUNNING), wall_seconds=20)).result
    assert "helper used" in result.output, result.output
    assert (result.sandbox or {}).get("cpu_seconds", 0) >= BURNT  # though the job's own processes never reaped it


@needs_bwrap
def test_a_benchmark_can_read_the_childs_own_profile_in_the_jobs_output(monkeypatch):
    from engine_factories import alices_job, module_with, run

    from gpu_worker.isolation.child import PROFILE_ENV

    monkeypatch.setenv(PROFILE_ENV, "5")  # the worker's environment, passed through to the sandbox
    result = run(alices_job(module_with(""))).result
    assert "the child's profile (CPU seconds" in result.output, result.output
    assert "child.py" in result.output  # the job's own functions, by name


@needs_bwrap
def test_without_a_cgroup_a_jobs_cpu_seconds_come_from_its_living_processes(monkeypatch, fresh_probe):
    from engine_factories import alices_job, module_with, run

    monkeypatch.setenv(cgroups.DISABLE_ENV, "0")  # as on the GPU machine: no cgroup counts the job
    result = run(alices_job(module_with(LEFT_RUNNING), wall_seconds=20)).result
    assert "helper used" in result.output, result.output
    # read at the final message: where the engine read it only after the job had ended (a loaded machine) there
    # is no count rather than a short one
    counted = (result.sandbox or {}).get("cpu_seconds")
    assert counted is None or (
        counted >= BURNT and result.sandbox["cpu_counted_by"] == "processes at the final message"
    )
