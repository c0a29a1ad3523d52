"""MIG instances on a cluster of GPUs: the profiles, where each may sit on a GPU, and a placer (a model).

A GPU in MIG mode is cut into instances. We model H100's table (NVIDIA, *Multi-Instance GPU User Guide*,
"Supported MIG Profiles", H100 80GB): a GPU has 7 compute slices and 8 memory slices, and each profile
takes a fixed run of memory slices that may start only at the places listed:

    profile   compute slices   memory slices   may start at
    1g.10gb   1                1               0, 1, 2, 3, 4, 5, 6
    2g.20gb   2                2               0, 2, 4
    3g.40gb   3                4               0, 4
    4g.40gb   4                4               0
    7g.80gb   7                8               0

(1g.20gb and the media-extension profiles are left out.) So a 4g and a 3g share a GPU, two 3g do, but a
1g sitting at slot 0 stops a 4g or a 7g from ever using that GPU until it ends: free slices are not the
same as room for an instance. A job asks for one instance of `gpus` compute slices.

A policy may say where each instance goes (`place_at`: a GPU and a first memory slice the profile
allows); one that does not gets the first fit (`place`): the lowest GPU, then the lowest start, where the
profile fits, as a placer that knows nothing of what comes next would do. First fit puts a 1g at slice 0
of the first GPU with room: exactly where a 4g or a 7g would have to start. Standard library only.
"""

from __future__ import annotations

COMPUTE_SLICES = 7  # per GPU
MEMORY_SLICES = 8
# compute slices asked for -> (memory slices taken, the first memory slice it may start at)
PROFILES: dict[int, tuple[int, tuple[int, ...]]] = {
    1: (1, (0, 1, 2, 3, 4, 5, 6)),
    2: (2, (0, 2, 4)),
    3: (4, (0, 4)),
    4: (4, (0,)),
    7: (8, (0,)),
}


class MigLayout:
    """Which job holds each memory slice of each GPU."""

    def __init__(self, gpus: int):
        self.slots: list[list[int | None]] = [[None] * MEMORY_SLICES for _ in range(gpus)]
        self.where: dict[int, tuple[int, int]] = {}  # job id -> (GPU, first memory slice)

    def _fits(self, gpu: int, start: int, width: int) -> bool:
        return all(holder is None for holder in self.slots[gpu][start : start + width])

    def place(self, job_id: int, size: int) -> tuple[int, int] | None:
        """First fit: the lowest GPU, then the lowest start, where the profile fits; None if no GPU has room."""
        width, starts = PROFILES[size]
        found = next(((g, s) for g in range(len(self.slots)) for s in starts if self._fits(g, s, width)), None)
        return None if found is None else self._take(job_id, width, *found)

    def place_at(self, job_id: int, size: int, gpu: int, start: int) -> tuple[int, int] | None:
        """Where the policy said; None while that room is taken. ValueError for a place the profile cannot be."""
        width, starts = PROFILES[size]
        if not 0 <= gpu < len(self.slots):
            raise ValueError(f"there is no GPU {gpu} (the cluster has {len(self.slots)}, numbered from 0)")
        if start not in starts:
            allowed = " or ".join(map(str, starts)).replace(" or ", ", ", len(starts) - 2)
            raise ValueError(f"a {size}g instance may start only at memory slice {allowed}, not {start}")
        return self._take(job_id, width, gpu, start) if self._fits(gpu, start, width) else None

    def _take(self, job_id: int, width: int, gpu: int, start: int) -> tuple[int, int]:
        self.slots[gpu][start : start + width] = [job_id] * width
        self.where[job_id] = (gpu, start)
        return gpu, start

    def release(self, job_id: int) -> None:
        gpu, _ = self.where.pop(job_id)
        self.slots[gpu] = [None if holder == job_id else holder for holder in self.slots[gpu]]
