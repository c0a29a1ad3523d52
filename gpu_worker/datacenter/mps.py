"""GPUs shared through MPS: how many clients a GPU takes, and how co-located jobs slow each other (a model).

Under MPS (NVIDIA's Multi-Process Service) the kernels of several processes run on one GPU at the same
time. Nothing is partitioned: the clients share the SMs and, above all, the memory bandwidth and the L2.
We model a job by two numbers, measured when it runs alone on a whole GPU (as a profiler would give them):

- `sm`: the fraction of the SMs it keeps busy;
- `bw`: the fraction of the HBM bandwidth it uses.

Jobs sharing a GPU each run at the rate `1 / max(1, sum of sm, sum of bw)` of their speed alone: while
the sums stay under 1 nobody slows down (the GPU had room to spare); past it, the resource most asked for
is divided among them. So a memory-bound job beside a compute-bound one costs each little, and two
memory-bound ones halve each other. Real interference has more terms (L2 thrashing, the MPS server's
scheduling, power and clocks); this is the roofline's first-order picture of it.

A GPU takes at most `CLIENTS` jobs. A policy places a job beside others as `(job id, GPU)`; a bare id
gets a GPU of its own (the lowest empty one), as without MPS. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping

CLIENTS = 4  # jobs one GPU takes at once


class MpsLayout:
    """Which jobs run on each GPU."""

    def __init__(self, gpus: int):
        self.clients: list[list[int]] = [[] for _ in range(gpus)]
        self.where: dict[int, tuple[int, int]] = {}  # job id -> (GPU, 0): the view's placement

    def empty_gpus(self) -> int:
        return sum(not jobs for jobs in self.clients)

    def place(self, job_id: int) -> tuple[int, int] | None:
        """A GPU of its own: the lowest empty one; None if every GPU has a client."""
        gpu = next((g for g, jobs in enumerate(self.clients) if not jobs), None)
        return None if gpu is None else self._take(job_id, gpu)

    def place_at(self, job_id: int, gpu: int) -> tuple[int, int] | None:
        """Beside the GPU's other clients; None while it has `CLIENTS`. ValueError for a GPU that does not exist."""
        if not 0 <= gpu < len(self.clients):
            raise ValueError(f"there is no GPU {gpu} (the cluster has {len(self.clients)}, numbered from 0)")
        return self._take(job_id, gpu) if len(self.clients[gpu]) < CLIENTS else None

    def _take(self, job_id: int, gpu: int) -> tuple[int, int]:
        self.clients[gpu].append(job_id)
        self.where[job_id] = (gpu, 0)
        return gpu, 0

    def release(self, job_id: int) -> None:
        gpu, _ = self.where.pop(job_id)
        self.clients[gpu].remove(job_id)

    def rates(self, demands: Mapping[int, tuple[float, float]]) -> dict[int, float]:
        """Each running job's speed as a fraction of its speed alone, from its GPU's `(sm, bw)` sums."""
        rates = {}
        for jobs in self.clients:
            sm = sum(demands[j][0] for j in jobs)
            bw = sum(demands[j][1] for j in jobs)
            for j in jobs:
                rates[j] = 1.0 / max(1.0, sm, bw)
        return rates
