"""The Helion rung: PyTorch's own operators over a tile of rows, compiled by Helion to Triton.

Helion's example softmax (github.com/pytorch/helion, examples/softmax.py, `softmax_decomposed`), for
Helion 1.0.0, the release pinned in bench/fetch_device_deps.sh for the image's PyTorch 2.11. Its
autotuner searches for minutes; the ladder fixes one configuration instead (one row a tile, the row in
registers, the Triton rung's shape): a kernel given one config does not autotune, so the rung times what
Helion generates for it, not a search.
"""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[1], num_warps=8))
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        values = x[tile_n, :]
        amax = torch.amax(values, dim=1, keepdim=True)
        exp = torch.exp(values - amax)
        out[tile_n, :] = exp / torch.sum(exp, dim=1, keepdim=True)
    return out


def softmax(x, y):
    return softmax_rows(x)  # a new tensor: Helion's kernels allocate their output, as PyTorch's operators do
