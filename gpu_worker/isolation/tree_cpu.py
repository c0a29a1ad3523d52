"""CPU seconds of a live process tree, read from /proc: the job's count where no cgroup counts it.

A sandbox's processes live in their own PID namespace, so their CPU seconds never reach the worker's
`RUSAGE_CHILDREN` (bwrap's init reaps them inside). Where the job has a cgroup with a CPU controller
(`cgroups.JobCgroup.cpu_seconds`) that count wins; elsewhere (the GPU machine) the engine reads the tree
while it is still alive, at the job's final message: each process's own seconds (`utime`, `stime`) plus those
of its children it already reaped (`cutime`, `cstime`). What the job spends after its final message (its
teardown) is not counted; what a process left behind unreaped by a living parent is.

The engine reads these numbers itself; nothing the learner's process says about itself enters them.
"""

from __future__ import annotations

import os
from collections import defaultdict

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, ticks of CPU: own and reaped children's) of one process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: the fields after it follow its last ')'
    fields = text[text.rfind(b")") + 2 :].split()
    return int(fields[1]), sum(int(v) for v in fields[11:15])


def cpu_seconds(root: int) -> float | None:
    """CPU seconds used so far by `root` and every living descendant of it (and their reaped children); None
    when `root` is gone."""
    parents: dict[int, list[int]] = defaultdict(list)
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := _stat(int(name))) is not None:
            parents[stat[0]].append(int(name))
            ticks[int(name)] = stat[1]
    if root not in ticks:
        return None
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(parents.get(pid, ()))
    return total / _TICKS
