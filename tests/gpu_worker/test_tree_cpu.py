"""The CPU seconds of a living process tree, read from /proc (`isolation.tree_cpu`)."""

from __future__ import annotations

import subprocess
import sys
import time

from gpu_worker.isolation import tree_cpu

# a parent that starts a grandchild burning CPU, then sleeps: the seconds are the grandchild's alone
BURN = "import time\\nend = time.process_time() + 0.5\\nwhile time.process_time() < end: pass\\ntime.sleep(60)"
TREE = f"""
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "{BURN}"])
time.sleep(60)
"""


def test_a_trees_seconds_include_a_grandchild_that_burnt_them():
    parent = subprocess.Popen([sys.executable, "-c", TREE])
    try:
        deadline = time.monotonic() + 20
        while (used := tree_cpu.cpu_seconds(parent.pid) or 0.0) < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert used >= 0.5  # the parent itself sleeps: only its descendant's seconds reach that
    finally:
        parent.kill()
        parent.wait()


def test_a_process_that_is_gone_has_no_figure():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert tree_cpu.cpu_seconds(gone.pid) is None


def test_a_zombie_has_no_figure_rather_than_a_wrong_one():
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 20
    while not tree_cpu.processes()[zombie.pid].ended and time.monotonic() < deadline:  # in /proc until waited for
        time.sleep(0.02)
    try:  # ended, not yet waited for
        assert tree_cpu.cpu_seconds(zombie.pid) is None  # its children are another's now: no count, not 0
    finally:
        zombie.wait()
