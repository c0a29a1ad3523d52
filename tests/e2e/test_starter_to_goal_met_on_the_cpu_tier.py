"""A new student without a GPU takes each first exercise from its starter to "every goal met" in the browser.

Issue 27's journey: vector-add, coalescing and transpose in CUDA C++ and Numba, and vector-add in Triton,
each run on the CPU tier's PTX executor. On vector-add, the guard's exercise, the student first leaves the
guard (or mask) out, in each language: the fault is marked on its source line in the editor. All journeys
share one live server, one pair of workers and one chromium. The goals are judged from the executor's
memory report (Triton's counted per `tl.load`: docs/ptx-executor.md).
"""

from __future__ import annotations

import pytest
from django.test import Client

from gpu_worker.exercise.labspec import find_lab
from tests.e2e.browser import BrowserTestCase

JOURNEYS = {
    ("vector-add", "cuda"): "wrong_answer",  # what the starter gets: it computes nothing yet
    ("vector-add", "numba"): "wrong_answer",
    ("vector-add", "triton"): "wrong_answer",
    ("coalescing", "cuda"): "accepted",  # correct, but a warp's threads are a row apart: not yet fast
    ("coalescing", "numba"): "accepted",
    ("transpose", "cuda"): "accepted",  # correct, but the write is strided: not yet fast
    ("transpose", "numba"): "accepted",
}
EXECUTOR = "CPU tier: PTX executor (NumPy), sm_90 PTX run on the CPU"

# Each language's vector add with its guard (or mask) left out: the last block reads past a and b.
UNGUARDED = {
    "cuda": (
        'extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)\n'
        "{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    c[i] = a[i] + b[i];\n"
        "}\n",
        "c[i] = a[i] + b[i];",
    ),
    "numba": (
        "from numba import cuda\n\n\n@cuda.jit\ndef vector_add(a, b, c):\n"
        "    i = cuda.grid(1)\n"
        "    c[i] = a[i] + b[i]\n",
        "c[i] = a[i] + b[i]",
    ),
    "triton": (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def vector_add(a, b, c, n, BLOCK: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(a + offsets)\n"
        "    y = tl.load(b + offsets, mask=offsets < n)\n"
        "    tl.store(c + offsets, x + y, mask=offsets < n)\n",
        "x = tl.load(a + offsets)",
    ),
}


@pytest.mark.e2e
@pytest.mark.integration
class StarterToGoalMetTests(BrowserTestCase):
    """A journey a test; the methods are made below, one per (lab, language) of `JOURNEYS`."""

    def open_exercise(self, slug: str, language: str) -> None:
        """Alice, signed in (her session's cookie: the login form has tests of its own), opens the exercise."""
        client = Client()
        client.force_login(self.alice)
        cookie = {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": self.live_server_url}
        self.context.add_cookies([cookie])
        page = self.page
        page.goto(f"{self.live_server_url}/exercises/{slug}/")
        page.wait_for_selector(".cm-content")
        page.select_option("#language", language)

    def submit_as_is(self) -> str:
        """Submit what the editor holds (a fresh student's: the starter) and wait for the verdict."""
        self.page.click("#submit")
        self.page.wait_for_selector("#verdict[data-verdict]", timeout=60_000)
        return self.page.get_attribute("#verdict", "data-verdict") or ""

    def ran_on_the_executor(self) -> None:
        """The run says where its figures come from: the CPU tier's PTX executor, not a GPU."""
        page = self.page
        assert EXECUTOR in page.inner_text("#events li[data-type=started]")
        assert "PTX executor" in page.inner_text("#compile-info")

    def starter(self, slug: str, language: str) -> None:
        page = self.page
        verdict = self.submit_as_is()
        assert verdict == JOURNEYS[slug, language]
        if verdict == "accepted":  # correct, and the page says which goal is missed and why
            assert "not yet fast" in page.inner_text("#verdict-message")
            missed = page.inner_text("#goals li.missed")
            assert "target at most" in missed and "module 2" in missed
        else:
            assert page.inner_text("#verdict") == "Wrong answer"
            assert page.locator("#goals li").count() == 0
        self.ran_on_the_executor()

    def out_of_bounds(self, language: str) -> None:
        """The guard (or mask) left out: the fault is marked on the load's line, its sentence on hover."""
        source, line = UNGUARDED[language]
        page = self.page
        assert self.submit(source) == "runtime_error"
        page.wait_for_selector(".cm-error-line")
        assert page.inner_text(".cm-error-line").strip() == line
        page.hover(".cm-lint-marker-error")
        assert "out-of-bounds load of" in page.inner_text(".cm-tooltip-lint")
        number = [row.strip() for row in source.splitlines()].index(line) + 1
        assert page.get_attribute("#diagnostics li[data-severity=error]", "data-line") == str(number)
        self.ran_on_the_executor()

    def reference(self, slug: str, language: str) -> None:
        page = self.page
        assert self.submit(find_lab(slug).references[language]) == "accepted"
        assert page.inner_text("#verdict-message").endswith("every goal met.")
        assert page.locator("#goals li.met").count() == page.locator("#goals li").count() >= 1
        goals = page.inner_text("#goals")
        assert "coalesced loads and stores: " in goals and ", target at most 4 sectors per request" in goals
        assert page.locator(".cm-error-line").count() == 0  # an earlier run's marks are gone
        self.ran_on_the_executor()

    def journey(self, slug: str, language: str) -> None:
        page = self.page
        self.open_exercise(slug, language)
        assert page.evaluate("window.warplab.getSource()") == find_lab(slug).starters[language]
        self.starter(slug, language)
        if slug == "vector-add":  # the guard is vector-add's lesson: first the student leaves it out
            self.out_of_bounds(language)
        self.reference(slug, language)
        page.wait_for_selector("#history li[data-verdict=accepted]")
        assert page.locator("#history li").count() == (3 if slug == "vector-add" else 2)
        assert self.console_errors == []


def _journey_test(slug: str, language: str):
    def test(self: StarterToGoalMetTests) -> None:
        self.journey(slug, language)

    test.__doc__ = f"{slug} in {language}: the starter's verdict, then the reference meets every goal."
    return test


# A test method per journey (pytest's parametrize does not reach a unittest class's methods).
for _slug, _language in JOURNEYS:
    _past = "_past_an_out_of_bounds_line" if _slug == "vector-add" else ""
    setattr(
        StarterToGoalMetTests,
        f"test_{_slug.replace('-', '_')}_in_{_language}_goes_from_starter{_past}_to_every_goal_met",
        _journey_test(_slug, _language),
    )
