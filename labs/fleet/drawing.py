"""An SVG drawing of one GPU cut into its slices: each slice a box as wide as its share, with SMs and memory.

MIG instances sit on the 8 memory slices they take (so gaps and the unusable eighth show);
MPS shares are as wide as their thread percentage; time-sliced replicas split the GPU in stripes.
Text is escaped: pool names come from admins, but the page treats every string as data.
"""

from __future__ import annotations

from django.utils.html import escape

from labs.fleet.mig_profiles import MEMORY_SLICES, model_for
from labs.fleet.plan import SliceSpec, share

WIDTH, HEIGHT, PAD = 640, 96, 4
COLOURS = {"full": "#2f6f4f", "mig": "#3465a4", "mps": "#c17d11", "timeslice": "#75507b"}


def _box(x: float, w: float, kind: str, title: str, lines: list[str]) -> str:
    text = "".join(
        f'<text x="{x + 6:.1f}" y="{24 + 16 * i}" font-size="12" fill="#fff">{escape(line)}</text>'
        for i, line in enumerate(lines)
    )
    return (
        f'<g class="slice slice-{kind}"><title>{escape(title)}</title>'
        f'<rect x="{x:.1f}" y="{PAD}" width="{max(w - PAD, 1):.1f}" height="{HEIGHT - 2 * PAD}" rx="4" '
        f'fill="{COLOURS.get(kind, "#555")}"/>{text}</g>'
    )


def draw(model_key: str, specs: list[SliceSpec], label: str) -> str:
    """The SVG markup (a string safe to put in a page) of a GPU of `model_key` laid out as `specs`."""
    model = model_for(model_key)
    parts = [f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#eee" rx="6"/>']
    if model is None:
        parts.append(f'<text x="8" y="40" font-size="13">unknown GPU model {escape(model_key)}</text>')
    elif not specs:
        parts.append(f'<text x="8" y="40" font-size="13">{escape(model.label)}: not laid out yet</text>')
    else:
        x = 0.0
        for spec in specs:
            got = share(model.key, spec)
            memory = f"{got.memory_gb:g} GB" if got.memory_gb else "memory shared"
            if spec.kind == "mig":
                profile = model.profile(spec.profile)
                width = WIDTH * (profile.memory_slices if profile else 1) / MEMORY_SLICES
                x = WIDTH * (spec.placement or 0) / MEMORY_SLICES
                lines = [spec.profile, f"{got.sms:.0f} SMs · {memory}", spec.pool]
            elif spec.kind == "mps":
                width = WIDTH * (spec.thread_percent or 0) / 100
                lines = [f"MPS {spec.thread_percent}%", f"≈{got.sms:.0f} SMs · {memory}", spec.pool]
            elif spec.kind == "timeslice":
                width = WIDTH
                lines = [f"time-sliced ×{spec.replicas}", f"{got.sms:.0f} SMs · {memory} shared", spec.pool]
            else:
                width = WIDTH
                lines = ["whole GPU", f"{got.sms:.0f} SMs · {memory}", spec.pool]
            parts.append(_box(x, width, spec.kind, got.words, lines))
            x += width
    return (
        f'<svg class="gpu-drawing" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(label)}">{"".join(parts)}</svg>'
    )
