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
from typing import NamedTuple

TICKS = os.sysconf("SC_CLK_TCK")


class Process(NamedTuple):
    """One process as /proc tells it: its parent, its own and its reaped children's CPU seconds, and whether it
    has ended (a zombie: its descendants are then another's, and their seconds lost to it)."""

    ppid: int
    own: float
    reaped: float
    ended: bool


def processes() -> dict[int, Process]:
    """pid -> `Process`, for every process still in /proc."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                text = f.read()
        except OSError:  # gone meanwhile
            continue
        # the command name (field 2) may hold spaces and parentheses: the fields after it follow its last ')'
        fields = text[text.rfind(b")") + 2 :].split()  # state ppid ... utime(11) stime(12) cutime(13) cstime(14)
        own, reaped = int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
        found[int(name)] = Process(int(fields[1]), own / TICKS, reaped / TICKS, fields[0] in (b"Z", b"X"))
    return found


def descendants(table: dict[int, Process], root: int) -> list[int]:
    """The living descendants of `root` in a `processes()` table."""
    children: dict[int, list[int]] = defaultdict(list)
    for pid, entry in table.items():
        children[entry.ppid].append(pid)
    found, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def cpu_seconds(root: int) -> float | None:
    """CPU seconds used so far by `root` and every living descendant of it (and their reaped children); None
    when `root` has ended (a job read after its end: its processes' seconds went with them, and a count of
    what is left would say less than it used)."""
    table = processes()
    if root not in table or table[root].ended:
        return None
    return sum(table[pid].own + table[pid].reaped for pid in [root, *descendants(table, root)])
