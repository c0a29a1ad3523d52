"""The exercise page shows everything a run knows where the student looks, loses nothing typed, and fits a phone."""

import re

import pytest

from gpu_worker.exercise.labspec import find_lab
from labs.models import Submission
from tests.e2e.browser import BrowserTestCase

VECTOR_ADD = {case.name: case for case in find_lab("vector-add").cases}
COALESCING = {case.name: case for case in find_lab("coalescing").cases}
REFERENCE = VECTOR_ADD["reference-numba"].source
NO_GUARD = """from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i == 0:
        print("hello from alice")
    c[i] = a[i] + b[i]
"""
STRIDED = COALESCING["strided-numba"].source.replace(
    "    if row < a.shape[0]", '    if row == 0 and col == 0:\n        print("copying")\n    if row < a.shape[0]'
)

# Every rendered figure: its text, whether its title fits its box, and its tick labels (one SI format).
FIGURES_JS = """() => [...document.querySelectorAll('#figures .figure[data-rendered]')].map((div) => ({
  title: div.dataset.title,
  text: div.querySelector('.main-svg').parentNode.textContent,
  titleFits: [...div.querySelectorAll('.gtitle, .gtitle-subtitle')].every(
    (t) => t.getBoundingClientRect().right <= div.getBoundingClientRect().right + 1),
  ticks: [...div.querySelectorAll('.xtick text, .ytick text')].map((t) => t.textContent),
}))"""


SI_TICK = re.compile(r"^(−?[0-9.]+[kMGTP]?(B/s|%)?|n=.*|this kernel)$")  # 100T, 4TB/s, 80%; never 10^15 or 1e+15


def figures_drawn(page) -> dict[str, dict]:
    """The rendered figures by the start of their title, each checked for a fitting title and SI ticks."""
    figures = {f["title"].split(" · ")[0]: f for f in page.evaluate(FIGURES_JS)}
    for title, figure in figures.items():
        assert figure["titleFits"], title
        assert all(SI_TICK.match(t) for t in figure["ticks"]), (title, figure["ticks"])
    return figures


@pytest.mark.e2e
@pytest.mark.integration
class StudentPageTests(BrowserTestCase):
    def test_alice_sees_her_output_her_error_line_and_the_memory_warnings_on_her_code(self):
        page = self.log_in()
        page.goto(f"{self.live_server_url}/exercises/coalescing/")
        page.wait_for_selector(".cm-content")
        assert self.submit(STRIDED) == "accepted"
        assert page.inner_text("#verdict") == "Accepted"
        assert page.inner_text("#verdict-message").startswith("1 check passed; ")
        page.wait_for_function("() => document.querySelector('#output').textContent.includes('copying')")
        # the simulator's diagnosis is on the line it is about, as a warning with its sentence on hover
        page.wait_for_selector(".cm-lint-marker-warning")
        assert page.inner_text(".cm-warning-line").strip() == "out[row, col] = a[row, col]"
        page.hover(".cm-lint-marker-warning")
        assert "touches 32 sectors" in page.inner_text(".cm-tooltip-lint")
        assert page.get_attribute("#diagnostics li[data-severity=warning]", "data-line") == "10"
        page.wait_for_function("() => document.querySelectorAll('#figures .figure[data-rendered]').length >= 4")
        figures = figures_drawn(page)  # a 0-FLOP copy is marked on the memory roof's axis, not left out
        memory_axis = figures["Roofline, memory axis (0 FLOP)"]["text"]
        assert (
            "memory roof 4.8 TB/s (datasheet)" in memory_axis and "32.8 kB moved per launch (not timed)" in memory_axis
        )
        threads = next(f["text"] for t, f in figures.items() if t.startswith("Occupancy vs threads per block"))
        assert "this submission: 100%" in threads and "PTX executor" in threads and "shared memory" in threads

        page.goto(f"{self.live_server_url}/exercises/vector-add/")
        page.wait_for_selector(".cm-content")
        assert self.submit(NO_GUARD) == "runtime_error"
        assert page.inner_text("#verdict") == "Runtime error"
        page.wait_for_selector(".cm-error-line")
        assert page.inner_text(".cm-error-line").strip() == "c[i] = a[i] + b[i]"
        assert "out-of-bounds load of 4 bytes" in page.inner_text("#diagnostics li[data-severity=error]")  # its line
        page.wait_for_function("() => document.querySelector('#output').textContent.includes('hello from alice')")
        assert page.inner_text("#history .history-verdict").startswith("Runtime error")
        assert self.console_errors == []

    def test_on_a_phone_nothing_alice_typed_is_lost_and_the_verdict_comes_into_view(self):
        self.page.set_viewport_size({"width": 390, "height": 844})
        page = self.log_in()
        page.goto(f"{self.live_server_url}/exercises/vector-add/")
        page.wait_for_selector(".cm-content")
        self.replace_source(REFERENCE + "# a long line scrolls inside the editor " + "x" * 200 + "\n")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        editor = page.locator("#editor").bounding_box()
        assert editor is not None and editor["x"] >= 0 and editor["x"] + editor["width"] <= 390
        page.select_option("#block-size", "128")  # the occupancy graphs follow the student's choice
        assert page.is_disabled("#sweep-blocks")  # the sweep times on a GPU: on the CPU tier it says why it is off
        assert "nothing is timed" in page.inner_text("#sweep-note")
        self.replace_source(REFERENCE)
        page.keyboard.press("Control+Enter")  # submits from the editor
        page.wait_for_selector("#verdict[data-verdict=accepted]", timeout=60_000)
        assert Submission.objects.latest("pk").launch["block"] == ["128"]
        page.wait_for_function(
            "() => { const r = document.querySelector('#verdict').getBoundingClientRect();"
            " return r.top >= 0 && r.bottom <= window.innerHeight; }"
        )
        page.wait_for_selector("#history li[data-verdict=accepted]")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert page.inner_text("#next-step").startswith("Solved. Next exercise: ")  # after an accepted run
        threads = "#figures .figure[data-title^='Occupancy vs threads per block'][data-rendered]"
        page.wait_for_selector(threads)
        assert page.eval_on_selector(threads, "div => div.data[1].x[0]") == 128  # the point that ran
        page.wait_for_selector("#figures .figure[data-title^='Roofline'][data-rendered]")
        roofline = figures_drawn(page)["Roofline (arithmetic intensity only: not timed)"]
        assert (
            "memory roof 4.8 TB/s (datasheet)" in roofline["text"]
            and "BF16 tensor roof (datasheet)" in roofline["text"]
        )
        assert "not timed" in roofline["text"] and any(t.endswith(("T", "P")) for t in roofline["ticks"])

        self.replace_source("# my draft\n" + REFERENCE)
        page.reload()  # the last run's verdict and figures come back; the draft stays
        page.wait_for_selector("#verdict[data-verdict=accepted]", timeout=10_000)
        page.wait_for_selector("#figures .figure[data-rendered]", timeout=10_000)
        assert page.inner_text("#editor .cm-content").startswith("# my draft")

        page.click("#history li button")  # the past code opens read-only beside the draft
        page.wait_for_selector("#past:not([hidden]) #past-editor .cm-content")
        assert page.get_attribute("#past-editor .cm-content", "contenteditable") == "false"
        assert "my draft" not in page.inner_text("#past-editor .cm-content")
        assert page.inner_text("#editor .cm-content").startswith("# my draft")

        page.click("#restore")  # the draft is kept before the past code replaces it
        page.wait_for_selector("#past", state="hidden")
        assert page.evaluate("window.warplab.getSource()") == REFERENCE
        assert page.locator("#kept-drafts li").count() == 1
        page.click("#kept-drafts li button")
        assert page.inner_text("#past-editor .cm-content").startswith("# my draft")

        page.click("#reset")
        assert "TODO" in page.evaluate("window.warplab.getSource()")
        assert page.locator("#kept-drafts li").count() == 2

        page.select_option("#language", "cuda")  # no GPU worker serves here: said before submit
        assert "goes to the CPU tier, where its PTX runs on the PTX executor" in page.inner_text("#language-note")
        page.select_option("#language", "numba")
        assert page.locator("#language-note").is_hidden()

        page.goto(f"{self.live_server_url}/")  # the module list shows the progress
        assert page.get_attribute("#exercise-vector-add", "data-progress") == "fast"  # its goals met
        assert page.get_attribute("#exercise-transpose", "data-progress") == "not_tried"
        assert self.console_errors == []
