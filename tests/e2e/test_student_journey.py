"""The student's main journey in a real browser: log in, fix the starter, watch the verdict stream in."""

import pytest

from gpu_worker.exercise.labspec import find_lab
from tests.e2e.browser import BrowserTestCase

CASES = {case.name: case for case in find_lab("vector-add").cases}
COALESCING = {case.name: case for case in find_lab("coalescing").cases}


@pytest.mark.e2e
@pytest.mark.integration
class StudentJourneyTests(BrowserTestCase):
    def test_alice_fixes_the_starter_and_watches_accepted_stream_in(self):
        page = self.log_in()
        page.click("text=Vector add")
        page.wait_for_selector(".cm-content")
        assert "TODO" in page.inner_text(".cm-content")
        assert self.submit(CASES["reference-numba"].source) == "accepted"
        types = page.eval_on_selector_all("#events li", "els => els.map(e => e.dataset.type)")
        assert types[0] == "queued" and "started" in types and "check" in types and types[-1] == "done"
        # the history is fetched again at the verdict: wait for the new verdict there, not for any row (the run's
        # row, still "queued", was there first; CI 2026-12-07 read it before the refresh came)
        page.wait_for_selector("#history li:has-text('Accepted')")
        assert "Accepted" in page.inner_text("#history")
        page.wait_for_function("document.querySelectorAll('#figures .figure[data-rendered]').length >= 4")
        titles = page.eval_on_selector_all("#figures .figure", "els => els.map(e => e.dataset.title)")
        assert any(t.startswith("Roofline") for t in titles) and sum("Occupancy" in t for t in titles) == 3
        assert all("PTX executor" in t for t in titles)  # every figure says where its numbers came from
        assert page.locator("#figures .main-svg").count() >= 4  # plotly drew them
        assert "coalesced" in page.inner_text("#events li[data-type=memory]")
        assert self.console_errors == []

    def test_a_syntax_error_is_marked_on_the_right_line(self):
        page = self.log_in()
        page.goto(f"{self.live_server_url}/exercises/vector-add/")
        page.wait_for_selector(".cm-content")
        assert self.submit(CASES["syntax-error-numba"].source) == "compile_error"
        assert page.get_attribute("#diagnostics li", "data-line") == "7"
        page.wait_for_selector(".cm-error-line")
        assert page.inner_text(".cm-error-line").strip() == "if i < c.size"

    def test_a_cuda_attempt_shows_its_registers(self):
        page = self.log_in()
        page.goto(f"{self.live_server_url}/exercises/vector-add/")
        page.select_option("#language", "cuda")
        page.wait_for_function("document.querySelector('.cm-content').innerText.includes('__global__')")
        assert self.submit(CASES["reference-cuda"].source) == "accepted"  # on the CPU tier's PTX executor
        registers = page.get_attribute("#compile-info[data-registers]", "data-registers")
        assert registers is not None and int(registers) > 0
        sass = page.text_content("#compile-info details.sass pre")
        assert "// line 6: c[i] = a[i] + b[i];" in sass and "FADD" in sass

    def test_a_strided_copy_is_accepted_and_told_it_touches_32_sectors_per_warp(self):
        page = self.log_in()
        page.goto(f"{self.live_server_url}/exercises/coalescing/")
        page.wait_for_selector(".cm-content")
        assert self.submit(COALESCING["strided-numba"].source) == "accepted"  # correct, and slow: the report says why
        memory = page.inner_text("#events li[data-type=memory]")
        assert "touches 32 sectors" in memory and "coalesced load touches 4" in memory, memory
        page.wait_for_function("document.querySelectorAll('#figures .figure[data-rendered]').length >= 4")
        assert self.console_errors == []
