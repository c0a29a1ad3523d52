"""Screenshots of each figure kind, as the exercise page draws them, for docs/figures/ (PNG, Debian's chromium).

    .venv/bin/python -m tests.e2e.figure_screenshots [--width 720]

The figures come from real runs of the lab references on the simulator (`python -m gpu_worker run`), drawn
by the bundled plotly.js (`./lab frontend` first): nothing is made up, and each says where it came from.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.conftest import chromium_path

ROOT = Path(__file__).resolve().parents[2]
PLOTLY = ROOT / "labs/static/labs/build/plotly.min.js"
OUT = ROOT / "docs/figures"
RUNS = {  # a kernel with FLOPs (roofline, occupancy) and a 0-FLOP copy (the memory axis)
    "vector-add": ROOT / "labs/content/01-silicon/vector-add/reference.py",
    "coalescing": ROOT / "labs/content/02-three-rules/coalescing/reference.py",
}


def figures_of(exercise: str, source: Path) -> list[dict]:
    """The figures of one simulator run of `source`, from the engine's own result document."""
    command = [sys.executable, "-m", "gpu_worker", "run", "--exercise", exercise, "--language", "numba"]
    out = subprocess.run([*command, "--source", str(source), "--backend", "sim"], capture_output=True, check=True)
    return json.loads(out.stdout)["figures"]


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.split(" · ")[0].lower()).strip("-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=720)
    args = parser.parse_args()
    kinds: dict[str, dict] = {}
    for exercise, source in RUNS.items():
        for entry in figures_of(exercise, source):
            kinds.setdefault(slug(entry["title"]), entry)
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        # no Django here, so not tests.e2e.browser's launcher: the same headless chromium, offline
        browser = pw.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": args.width, "height": 600})
        page.set_content(f"<div id='fig' style='width:{args.width - 16}px'></div>")
        page.add_script_tag(path=str(PLOTLY))
        for name, entry in sorted(kinds.items()):
            page.evaluate("(f) => Plotly.newPlot('fig', f.data, f.layout, {staticPlot: true})", entry["figure"])
            page.locator("#fig").screenshot(path=str(OUT / f"{name}.png"))
            print(OUT / f"{name}.png")
        browser.close()


if __name__ == "__main__":
    main()
