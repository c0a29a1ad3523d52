"""The alpha-beta cost of NCCL's collectives, and bandwidth reported as nccl-tests reports it.

A collective among `n` GPUs of a message of `S` bytes takes, in the alpha-beta
model (Hockney 1994; Thakur, Rabenseifner and Gropp, "Optimization of
Collective Communication Operations in MPICH", IJHPCA 19(1), 2005),
`steps * alpha + bytes_per_gpu / B`: a latency per algorithm step and the
bytes each GPU must send over its link of bandwidth `B` (one direction).

Ring (NCCL's ring; Patarasuk and Yuan 2009):
  all-reduce      2(n-1) steps, 2(n-1)/n * S bytes per GPU (reduce-scatter then all-gather)
  reduce-scatter  (n-1) steps,  (n-1)/n * S
  all-gather      (n-1) steps,  (n-1)/n * S
  broadcast       (n-1) steps,  S (pipelined in chunks along the chain; the large-message limit)
Tree:
  all-reduce      NCCL's double binary tree (Sanders, Speck and Träff 2009; NCCL 2.4): reduce up and broadcast
                  down two trees, each carrying half the message: 2 * ceil(log2 n) steps; an inner node sends
                  about 2S in all, so 2S / B (NCCL's own tuning model uses algbw = busbw / 2 for trees).
  broadcast       the same two trees, down only: ceil(log2 n) steps, S / B.
  reduce-scatter, all-gather: NCCL runs these on rings only; the "tree" row is the log-depth recursive
                  halving / doubling of Thakur et al. 2005: ceil(log2 n) steps, (n-1)/n * S (exact for n a power of 2).
With n = 2 every algorithm is one exchange: tree and ring cost the same.

S follows nccl-tests (doc/PERFORMANCE.md): the buffer for all-reduce and
broadcast, the whole gathered or scattered array (per-rank count times n) for
all-gather and reduce-scatter. algbw = S / t; busbw = algbw * factor, with
factor 2(n-1)/n for all-reduce, (n-1)/n for all-gather and reduce-scatter, 1
for broadcast, so that busbw is comparable with the link's peak whatever n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpu_worker.multigpu import MODEL
from gpu_worker.multigpu.links import Link

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
ALGORITHMS = ("ring", "tree")
COLLECTIVE_NAMES = {
    "all_reduce": "all-reduce",
    "all_gather": "all-gather",
    "reduce_scatter": "reduce-scatter",
    "broadcast": "broadcast",
}
SOURCE = (
    "alpha-beta model (Thakur, Rabenseifner and Gropp 2005; NCCL's ring and double binary tree); "
    "algbw and busbw as nccl-tests doc/PERFORMANCE.md defines them"
)


def _check(collective: str, algorithm: str, n: int) -> None:
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r} (one of {', '.join(COLLECTIVES)})")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
    if n < 1:
        raise ValueError(f"a collective needs at least one GPU, not {n}")


def bus_factor(collective: str, n: int) -> float:
    """nccl-tests' correction from algorithm to bus bandwidth (doc/PERFORMANCE.md, Summary)."""
    _check(collective, "ring", n)
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective in ("all_gather", "reduce_scatter"):
        return (n - 1) / n
    return 1.0


def steps(collective: str, algorithm: str, n: int) -> int:
    """How many latency-bound steps the algorithm takes (the alpha count)."""
    _check(collective, algorithm, n)
    if n == 1:
        return 0
    if algorithm == "ring" or n == 2:
        return 2 * (n - 1) if collective == "all_reduce" else n - 1
    depth = math.ceil(math.log2(n))
    return 2 * depth if collective == "all_reduce" else depth


def bytes_per_gpu(collective: str, algorithm: str, size: float, n: int) -> float:
    """Bytes the busiest GPU sends over its link for a message of `size` bytes (S as nccl-tests counts it)."""
    _check(collective, algorithm, n)
    if n == 1:
        return 0.0
    if collective == "broadcast":
        return float(size)
    if collective == "all_reduce":
        if algorithm == "tree" and n > 2:
            return 2.0 * size
        return 2 * (n - 1) / n * size
    return (n - 1) / n * size


@dataclass(frozen=True)
class CollectiveCost:
    """One modelled collective: its time and the two bandwidths nccl-tests would print for it."""

    collective: str
    algorithm: str
    n: int
    size: float  # bytes, S as nccl-tests counts it
    link: str
    time: float  # seconds
    latency_part: float  # seconds spent in the alpha term
    algbw: float  # bytes/s
    busbw: float  # bytes/s
    label: str = MODEL


def cost(collective: str, algorithm: str, size: float, n: int, link: Link) -> CollectiveCost:
    """The alpha-beta time of one collective and its algbw and busbw."""
    if size < 0:
        raise ValueError(f"a message cannot have {size} bytes")
    latency = steps(collective, algorithm, n) * link.latency
    time = latency + bytes_per_gpu(collective, algorithm, size, n) / link.bandwidth
    algbw = size / time if time > 0 else math.inf
    busbw = algbw * bus_factor(collective, n) if time > 0 else math.inf
    return CollectiveCost(collective, algorithm, n, float(size), link.key, time, latency, algbw, busbw)


def algbw(size: float, seconds: float) -> float:
    """nccl-tests' algorithm bandwidth S / t, for a measured time."""
    return size / seconds


def busbw(collective: str, size: float, seconds: float, n: int) -> float:
    """nccl-tests' bus bandwidth for a measured time."""
    return algbw(size, seconds) * bus_factor(collective, n)


def message_sizes(smallest: int = 8, largest: int = 1 << 30, factor: int = 2) -> list[int]:
    """Sizes as nccl-tests sweeps them (`-b 8 -e 1G -f 2`)."""
    if smallest < 1 or largest < smallest or factor < 2:
        raise ValueError("sizes need 1 <= smallest <= largest and a factor of at least 2")
    sizes, size = [], smallest
    while size <= largest:
        sizes.append(size)
        size *= factor
    return sizes
