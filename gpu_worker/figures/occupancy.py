"""The CUDA Occupancy Calculator's three graphs, as Plotly JSON (`figures.plain`): occupancy against threads
per block, registers per thread and shared memory per block, each with the submission's point marked.

Every figure names its architecture and carries the caller's `source_label` (which device,
slice or simulator the kernel's numbers came from) in its title and its `layout.meta`, plus
the rules it was computed with, so a figure read on its own still says where it came from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpu_worker.figures import plain
from gpu_worker.figures.text import title as figure_title
from gpu_worker.figures.text import top_margin
from gpu_worker.science.archs import AmdArch, NvidiaArch, get_arch
from gpu_worker.science.occupancy import FACTOR_BITS, INT_MAX, cuda_occupancy_batch, occupancy

LINE = "#1f77b4"
POINT = "#d62728"


def _nvidia_sweep(a: NvidiaArch, carveout: int | None, block_barriers: int) -> Callable[..., tuple[list, list, list]]:
    """Occupancy over arrays through the vectorised calculator: (occupancy %, active blocks, limiting factor)."""

    def sweep(threads: Any, regs: Any, shared: Any) -> tuple[list, list, list]:
        r = cuda_occupancy_batch(a, threads, regs, 0, shared, carveout=carveout, block_barriers=block_barriers)
        active = r["active_blocks"]
        occ = 100.0 * active * r["warps_per_block"] / a.max_warps_per_sm
        factor = np.full(active.shape, "cannot launch", dtype=object)
        for name in reversed(FACTOR_BITS):  # the first factor in FACTOR_BITS order wins a tie
            limit = r[f"limit_{name}"]
            factor = np.where((active > 0) & (limit == active) & (limit < INT_MAX), name.replace("_", " "), factor)
        return occ.tolist(), active.tolist(), factor.tolist()

    return sweep


def _scalar_sweep(arch: str, **kwargs: Any) -> Callable[..., tuple[list, list, list]]:
    """Occupancy point by point through `occupancy` (the AMD what-ifs have no vectorised twin)."""

    def sweep(threads: Any, regs: Any, shared: Any) -> tuple[list, list, list]:
        t, r, s = np.broadcast_arrays(np.asarray(threads), np.asarray(regs), np.asarray(shared))
        results = [occupancy(arch, int(x), int(y), 0, int(z), **kwargs) for x, y, z in zip(t, r, s, strict=True)]
        return (
            [100.0 * res.occupancy for res in results],
            [res.active_blocks_per_sm for res in results],
            [res.limited_by.replace("_", " ") for res in results],
        )

    return sweep


def _figure(
    title: str,
    x_title: str,
    x: list[int],
    y: list[float],
    blocks: list[int],
    factors: list[str],
    point: tuple[int, float, int, str],
    meta: dict[str, Any],
    footnote: str,
    terms: tuple[str, str],
) -> dict[str, Any]:
    block_word, sm_word = terms
    name, _, arch = title.partition(" on ")
    px, py, pblocks, pfactor = point
    # A staircase drawn "hv" needs only the points where the step changes, and the last one.
    keep = [i for i in range(len(x)) if i in (0, len(x) - 1) or (y[i], factors[i]) != (y[i - 1], factors[i - 1])]
    x, y = [x[i] for i in keep], [y[i] for i in keep]
    blocks, factors = [blocks[i] for i in keep], [factors[i] for i in keep]
    line = plain.scatter(
        x=x,
        y=y,
        mode="lines",
        line={"shape": "hv", "color": LINE},
        name="occupancy",
        customdata=[list(pair) for pair in zip(blocks, factors, strict=True)],
        hovertemplate=f"%{{x}}: %{{y:.0f}}%, %{{customdata[0]}} {block_word}s per {sm_word}, "
        "limited by %{customdata[1]}<extra></extra>",
    )
    here = plain.scatter(
        x=[px],
        y=[py],
        mode="markers",
        marker={"symbol": "star", "size": 16, "color": POINT, "line": {"width": 1, "color": "black"}},
        name="this submission",
        hovertemplate=f"this submission: %{{x}}, %{{y:.0f}}%, {pblocks} {block_word}s per {sm_word}, "
        f"{pfactor}<extra></extra>",
    )
    label = f"this submission: {py:.0f}%" if pfactor != "cannot launch" else "this submission: cannot launch"
    layout = dict(
        # short enough for a phone; the architecture and the source on lines of their own
        title=figure_title(name, f"{arch} · {meta['source']}" if arch else meta["source"]),
        xaxis={"title": {"text": x_title}, "tickformat": "~s"},
        yaxis={"title": {"text": f"occupancy (% of {sm_word} warp slots)"}, "range": [0, 105], "ticksuffix": "%"},
        showlegend=False,
        margin={"l": 60, "r": 20, "t": top_margin(f"{arch} · {meta['source']}"), "b": 100},
        meta=meta,
        annotations=[
            # below a high point, so the label never meets the title
            {
                "x": px,
                "y": py,
                "text": label,
                "showarrow": True,
                "arrowhead": 2,
                "ax": 40,
                "ay": 40 if py > 60 else -40,
            },
            {
                "text": footnote,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": 0,
                "yanchor": "top",
                "yshift": -62,  # below the axis title (ticks and title take about 55 px), never over it
                "showarrow": False,
                "xanchor": "left",
                "font": {"size": 10, "color": "#555"},
            },
        ],
    )
    return plain.figure([line, here], layout)


def occupancy_figures(
    arch: str,
    threads_per_block: int,
    registers_per_thread: int,
    shared_bytes: int,
    source_label: str,
    *,
    carveout: int | None = None,
    block_barriers: int = 1,
) -> list[dict[str, Any]]:
    """The three occupancy graphs as `{title, figure}` dicts (figure: Plotly JSON with data and layout).

    `shared_bytes` is the block's shared memory (static plus dynamic); `source_label` says where the
    kernel's numbers came from, e.g. "NVIDIA H200 (sm_90), full GPU" or "simulator: sm_90 what-if".
    """
    a = get_arch(arch)
    here = occupancy(
        arch, threads_per_block, registers_per_thread, 0, shared_bytes, carveout=carveout, block_barriers=block_barriers
    )
    if isinstance(a, AmdArch):
        sweep = _scalar_sweep(arch, carveout=carveout)
        max_regs, max_shared, step, terms = (
            a.addressable_vgprs,
            a.lds_per_cu,
            a.lds_allocation_unit,
            ("workgroup", "CU"),
        )
        reg_word, shared_word = "VGPRs per wavefront lane", "LDS bytes per workgroup"
    else:
        sweep = _nvidia_sweep(a, carveout, block_barriers)
        max_regs, step, terms = a.max_registers_per_thread, a.shared_allocation_unit, ("block", "SM")
        max_shared = a.shared_mem_per_block_optin
        reg_word, shared_word = "registers per thread", "shared memory per block (bytes)"
    meta = {"source": source_label, "arch": a.name, "rules": here.rules, "carveout": here.carveout}
    footnote = f"{a.label}; {here.rules}; shared memory {here.carveout}."
    point_factor = here.limited_by.replace("_", " ")
    what_if = " (what-if)" if here.what_if else ""

    threads = list(range(32, 1025, 32))
    regs = list(range(1, max_regs + 1))
    shared = sorted(set(range(0, max_shared + 1, step)) | {min(shared_bytes, max_shared)})
    specs = [
        (
            "Occupancy vs threads per block",
            "threads per block",
            threads,
            (threads, registers_per_thread, shared_bytes),
            threads_per_block,
        ),
        (
            f"Occupancy vs {reg_word.split(' per ')[0]}",
            reg_word,
            regs,
            (threads_per_block, regs, shared_bytes),
            registers_per_thread,
        ),
        (
            "Occupancy vs shared memory per block",
            shared_word,
            shared,
            (threads_per_block, registers_per_thread, shared),
            shared_bytes,
        ),
    ]
    out = []
    for name, x_title, x, args, px in specs:
        y, blocks, factors = sweep(*args)
        title = f"{name} on {a.name}{what_if}"
        point = (px, 100.0 * here.occupancy, here.active_blocks_per_sm, point_factor)
        fig = _figure(title, x_title, x, y, blocks, factors, point, meta, footnote, terms)
        out.append({"title": f"{title} · {source_label}", "figure": fig})
    return out
