"""Ada plans a node in a real browser: adds an H200, cuts it into MIG instances, is refused an impossible
MPS layout with the reason, and downloads the node's checked docker-compose override."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from channels.testing import ChannelsLiveServerTestCase
from playwright.sync_api import sync_playwright

from tests.conftest import chromium_path
from tests.e2e.browser import CHROMIUM_ARGS
from tests.labs.factories import PASSWORD, make_admin


@pytest.mark.e2e
@pytest.mark.integration
class AdminPlansANodeTests(ChannelsLiveServerTestCase):
    host = "127.0.0.1"

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.playwright = sync_playwright().start()
        cls.browser = cls.playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.close()
        cls.playwright.stop()
        super().tearDownClass()

    def test_ada_lays_out_an_h200_and_takes_its_files(self):
        make_admin("ada")
        context = self.browser.new_context(accept_downloads=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{self.live_server_url}/accounts/login/")
        page.fill("input[name=username]", "ada")
        page.fill("input[name=password]", PASSWORD)
        page.click("#login")
        page.wait_for_url(f"{self.live_server_url}/")
        page.goto(f"{self.live_server_url}/fleet/plan/")
        page.fill("#add-node input[name=name]", "lab1")
        page.click("#add-node button")
        page.fill("#add-gpu input[name=node]", "lab1")
        page.fill("#add-gpu input[name=index]", "0")
        page.fill("#add-gpu input[name=model]", "NVIDIA H200")
        page.click("#add-gpu button")
        gpu = "#gpu-lab1-0"
        page.fill(f"{gpu} textarea[name=layout]", "mig 3g.71gb h200.mig3g\nmig 3g.71gb h200.mig3g")
        page.click(f"{gpu} .layout-form button")
        page.wait_for_selector(f"{gpu} svg .slice-mig >> nth=1")
        assert page.locator(f"{gpu} svg g.slice-mig").count() == 2
        assert "60 SMs · 71 GB" in (page.text_content(f"{gpu} svg") or "")
        assert "2 concurrent runs" in page.inner_text("#lane-graded")

        page.fill(f"{gpu} textarea[name=layout]", "mps 60% h200.a\nmps 50% h200.b")
        page.click(f"{gpu} .layout-form button")
        page.wait_for_selector(f"{gpu} .layout-problems")
        assert "MPS shares add up to 110%" in page.inner_text(f"{gpu} .layout-problems")
        assert page.locator(f"{gpu} svg g.slice-mig").count() == 2  # the saved layout is unchanged

        with page.expect_download() as download:
            page.click("#node-lab1 a.export[data-kind=compose]")
        services = yaml.safe_load(Path(download.value.path()).read_text())["services"]
        assert set(services) == {"worker-lab1-gpu0-s0", "worker-lab1-gpu0-s1"}
        assert services["worker-lab1-gpu0-s0"]["environment"]["CUDA_VISIBLE_DEVICES"].startswith("${MIG_LAB1_GPU0_S0:?")
        assert errors == []
        context.close()
