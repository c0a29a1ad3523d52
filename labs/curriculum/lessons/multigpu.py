"""Module 5's figures: collectives, pipeline bubbles, data- and tensor-parallel communication, activation memory.

Every number is from `gpu_worker.multigpu`'s models and every figure says so
in its title ("model") and in `layout.meta.source`. Each builder takes its
parameters, so the calculators page (`labs.views.calculators`) draws the same
figures for a learner's values; the lesson draws them with the defaults below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from gpu_worker.multigpu import activation_memory, collectives, data_parallel, pipeline, tensor_parallel
from gpu_worker.multigpu.links import (
    H200_BF16_DENSE_FLOPS,
    H200_BF16_SOURCE,
    H200_MEMORY_BYTES,
    H200_MEMORY_SOURCE,
    LINKS,
    Link,
)
from labs.curriculum.lessons.registry import LessonContext, lesson_figure, source_note

Figure = dict[str, Any]
LINK_COLORS = {"nvlink": "#2ca02c", "infiniband": "#d62728"}
DASH = {"ring": "solid", "tree": "dot"}


def _finish(fig: go.Figure, title: str, source: str) -> Figure:
    note = f"model: {source}"
    fig.update_layout(
        title={"text": f"{title} (model)"},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 70, "r": 20, "t": 70, "b": 60},
        meta={"source": note, "label": "model"},
        annotations=[
            *fig.layout.annotations,
            source_note(note),
        ],
    )
    return json.loads(fig.to_json())


def _links(keys: tuple[str, ...]) -> list[Link]:
    return [LINKS[k] for k in keys]


def _links_source(links: list[Link]) -> str:
    return "; ".join(link.source for link in links)


@dataclass(frozen=True)
class CollectiveParams:
    collective: str = "all_reduce"
    gpus: int = 8
    smallest: int = 8
    largest: int = 1 << 30
    algorithms: tuple[str, ...] = ("ring", "tree")
    links: tuple[str, ...] = ("nvlink", "infiniband")


def collective_figure(params: CollectiveParams, what: str) -> Figure:
    """Time (`what="time"`) or nccl-tests' bus bandwidth (`what="busbw"`) against message size."""
    sizes = collectives.message_sizes(params.smallest, params.largest)
    name = collectives.COLLECTIVE_NAMES[params.collective]
    fig = go.Figure()
    links = _links(params.links)
    for link in links:
        for algorithm in params.algorithms:
            costs = [collectives.cost(params.collective, algorithm, s, params.gpus, link) for s in sizes]
            y = [c.time * 1e6 for c in costs] if what == "time" else [c.busbw / 1e9 for c in costs]
            fig.add_trace(
                go.Scatter(
                    x=sizes,
                    y=y,
                    mode="lines",
                    name=f"{algorithm}, {link.name} (model)",
                    line={"color": LINK_COLORS.get(link.key), "dash": DASH[algorithm]},
                )
            )
        if what == "busbw":
            fig.add_hline(y=link.bandwidth / 1e9, line={"color": LINK_COLORS.get(link.key), "width": 1, "dash": "dash"})
    fig.update_xaxes(type="log", title="message size S (bytes, as nccl-tests counts it)", exponentformat="power")
    if what == "time":
        fig.update_yaxes(type="log", title="time (us)")
        title = f"{name} time among {params.gpus} GPUs"
    else:
        fig.update_yaxes(type="log", title="bus bandwidth (GB/s)")
        title = f"{name} bus bandwidth among {params.gpus} GPUs (dashed: the link's peak per direction)"
    return _finish(fig, title, f"{collectives.SOURCE}; {_links_source(links)}")


@dataclass(frozen=True)
class BubbleParams:
    stages: int = 8
    max_micro_batches: int = 64
    chunks: tuple[int, ...] = (1, 2, 4)


def bubble_figure(params: BubbleParams) -> Figure:
    """Bubble fraction against micro-batches (GPipe and 1F1B share it; interleaving divides it), and memory held."""
    p = params.stages
    ms = list(range(1, params.max_micro_batches + 1))
    fig = go.Figure()
    for v in params.chunks:
        name = "GPipe and 1F1B" if v == 1 else f"interleaved 1F1B, v = {v}"
        fig.add_trace(go.Scatter(x=ms, y=[pipeline.bubble_fraction(p, m, v) for m in ms], mode="lines", name=name))
    for schedule, dash in (("gpipe", "dash"), ("1f1b", "dot")):
        fig.add_trace(
            go.Scatter(
                x=ms,
                y=[pipeline.peak_in_flight(schedule, p, m) for m in ms],
                mode="lines",
                yaxis="y2",
                line={"dash": dash, "color": "#7f7f7f" if schedule == "gpipe" else "#17becf"},
                name=f"micro-batches stage 0 holds, {'GPipe' if schedule == 'gpipe' else '1F1B'} (right axis)",
            )
        )
    fig.update_layout(
        xaxis={"title": "micro-batches m", "type": "log"},
        yaxis={"title": "bubble: (p - 1) / (v m + p - 1) of the step", "range": [0, 1]},
        yaxis2={"title": "activations held (micro-batches)", "overlaying": "y", "side": "right", "type": "log"},
    )
    return _finish(fig, f"Pipeline bubble with p = {p} stages", pipeline.SOURCE)


@dataclass(frozen=True)
class DataParallelParams:
    gpus: int = 64
    bytes_per_grad: int = 2
    tokens_per_gpu: int = 4096
    links: tuple[str, ...] = ("nvlink", "infiniband")


def data_parallel_figure(params: DataParallelParams) -> Figure:
    """Gradient all-reduce time per step against model size, each link, beside the step's compute."""
    sizes = [10 ** (8 + k / 4) for k in range(17)]  # 100 M to 1 T parameters
    fig = go.Figure()
    links = _links(params.links)
    for link in links:
        steps = [
            data_parallel.step(
                n, params.gpus, link, params.tokens_per_gpu, H200_BF16_DENSE_FLOPS, 1.0, params.bytes_per_grad
            )
            for n in sizes
        ]
        fig.add_trace(
            go.Scatter(
                x=sizes,
                y=[s.all_reduce.time * 1e3 for s in steps],
                name=f"ring all-reduce, {link.name}",
                line={"color": LINK_COLORS.get(link.key)},
            )
        )
    compute = [6.0 * n * params.tokens_per_gpu / H200_BF16_DENSE_FLOPS * 1e3 for n in sizes]
    fig.add_trace(go.Scatter(x=sizes, y=compute, name="forward + backward at the BF16 peak", line={"dash": "dash"}))
    fig.update_xaxes(type="log", title="parameters", exponentformat="SI")
    fig.update_yaxes(type="log", title="time per step (ms)")
    title = f"Data-parallel gradient all-reduce, {params.gpus} GPUs, {params.tokens_per_gpu} tokens per GPU"
    return _finish(fig, title, f"{data_parallel.SOURCE}; {H200_BF16_SOURCE}; {_links_source(links)}")


@dataclass(frozen=True)
class TensorParallelParams:
    batch: int = 1
    seq: int = 2048
    hidden: int = 12288
    max_tp: int = 64
    efficiency: float = 1.0
    bytes_per_elem: int = 2
    links: tuple[str, ...] = ("nvlink", "infiniband")


def tensor_parallel_figure(params: TensorParallelParams) -> Figure:
    """One layer's compute and all-reduce time per GPU against the tensor-parallel degree, each link."""
    degrees = [t for t in (1, 2, 4, 8, 16, 32, 64, 128) if t <= params.max_tp]
    fig = go.Figure()
    links = _links(params.links)
    args = (params.batch, params.seq, params.hidden)
    for link in links:
        steps = [
            tensor_parallel.layer_step(*args, t, link, H200_BF16_DENSE_FLOPS, params.efficiency, params.bytes_per_elem)
            for t in degrees
        ]
        fig.add_trace(
            go.Scatter(
                x=degrees,
                y=[s.comm_time * 1e3 for s in steps],
                name=f"4 all-reduces, {link.name}",
                line={"color": LINK_COLORS.get(link.key)},
            )
        )
    compute = [
        tensor_parallel.layer_step(*args, t, links[0], H200_BF16_DENSE_FLOPS, params.efficiency).compute_time * 1e3
        for t in degrees
    ]
    fig.add_trace(go.Scatter(x=degrees, y=compute, name="compute per GPU (forward + backward)", line={"dash": "dash"}))
    fig.update_xaxes(type="log", title="tensor-parallel degree t", tickvals=degrees)
    fig.update_yaxes(type="log", title="time per layer (ms)")
    size = tensor_parallel.all_reduce_bytes(*args, params.bytes_per_elem)
    title = f"Megatron layer, b={params.batch} s={params.seq} h={params.hidden}: all-reduce of {size / 2**20:.0f} MiB"
    source = f"{tensor_parallel.SOURCE}; {H200_BF16_SOURCE} x efficiency {params.efficiency:g}; {_links_source(links)}"
    return _finish(fig, title, source)


@dataclass(frozen=True)
class MemoryParams:
    seq: int = 2048
    batch: int = 1
    hidden: int = 12288
    heads: int = 96
    layers: int = 96


def activation_memory_figure(params: MemoryParams) -> Figure:
    """Activation memory per GPU against the tensor-parallel degree, with and without sequence parallelism."""
    degrees = [1, 2, 4, 8, 16]
    # with 1F1B the first stage holds p micro-batches of its L/p layers, L layers' worth whatever p
    # (Korthikanti et al. 2022, section 4.2.3)
    held = params.layers
    fig = go.Figure()
    args = (params.seq, params.batch, params.hidden, params.heads)
    for mode in ("tp", "tp_sp", "tp_selective", "tp_sp_selective"):
        y = [activation_memory.per_layer_bytes(mode, *args, tp=t) * held / 1e9 for t in degrees]
        fig.add_trace(go.Scatter(x=degrees, y=y, name=activation_memory.MODES[mode]))
    fig.add_hline(y=H200_MEMORY_BYTES / 1e9, line={"dash": "dash", "color": "#7f7f7f"})
    fig.update_xaxes(type="log", title="tensor-parallel degree t", tickvals=degrees)
    fig.update_yaxes(type="log", title="activation memory per GPU (GB)")
    title = (
        f"Activations, s={params.seq} b={params.batch} h={params.hidden} a={params.heads}, "
        f"{params.layers} layers, 1F1B's first stage (dashed: H200 memory)"
    )
    return _finish(fig, title, f"{activation_memory.SOURCE}; {H200_MEMORY_SOURCE}")


@lesson_figure("multigpu-collective-time")
def lesson_collective_time(context: LessonContext) -> Figure:
    return collective_figure(CollectiveParams(), "time")


@lesson_figure("multigpu-collective-busbw")
def lesson_collective_busbw(context: LessonContext) -> Figure:
    return collective_figure(CollectiveParams(), "busbw")


@lesson_figure("multigpu-bubble")
def lesson_bubble(context: LessonContext) -> Figure:
    return bubble_figure(BubbleParams())


@lesson_figure("multigpu-data-parallel")
def lesson_data_parallel(context: LessonContext) -> Figure:
    return data_parallel_figure(DataParallelParams())


@lesson_figure("multigpu-tensor-parallel")
def lesson_tensor_parallel(context: LessonContext) -> Figure:
    return tensor_parallel_figure(TensorParallelParams())


@lesson_figure("multigpu-activation-memory")
def lesson_activation_memory(context: LessonContext) -> Figure:
    return activation_memory_figure(MemoryParams())
