"""A live-server test case with real workers and Debian's chromium driven by Playwright (no browser download)."""

from __future__ import annotations

from channels.testing import ChannelsLiveServerTestCase
from django.db import connection
from playwright.sync_api import Page, sync_playwright

from labs.curriculum.services import sync_labs
from tests import processes
from tests.conftest import chromium_path
from tests.labs.factories import PASSWORD, make_student

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


class BrowserTestCase(ChannelsLiveServerTestCase):
    """Daphne in a subprocess, the web and sim Celery workers, and one headless chromium for the class."""

    host = "127.0.0.1"
    sim_env: dict[str, str] = {}  # more of the sim worker's environment, for a class that needs it

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        processes.purge_queues("sim", "web")
        db_url = processes.database_url(connection.settings_dict)
        cls.workers = [processes.start_web_worker(db_url), processes.start_sim_worker(**cls.sim_env)]
        cls.playwright = sync_playwright().start()
        cls.browser = cls.playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.close()
        cls.playwright.stop()
        for worker in cls.workers:
            worker.stop()
        super().tearDownClass()

    def setUp(self) -> None:
        sync_labs()
        self.alice = make_student("alice")
        self.context = self.browser.new_context()
        self.page = self.context.new_page()
        self.console_errors: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        self.page.on("pageerror", lambda e: self.console_errors.append(str(e)))

    def tearDown(self) -> None:
        self.context.close()

    def log_in(self, username: str = "alice") -> Page:
        page = self.page
        page.goto(f"{self.live_server_url}/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.click("#login")
        page.wait_for_url(f"{self.live_server_url}/")
        return page

    def replace_source(self, text: str) -> None:
        """Select all in the editor and paste, as a learner would."""
        self.page.click(".cm-content")
        self.page.keyboard.press("Control+A")
        self.page.keyboard.press("Delete")
        self.page.keyboard.insert_text(text)

    def submit(self, text: str) -> str:
        """Put `text` in the editor, submit it and wait for the verdict: the verdict."""
        self.replace_source(text)
        self.page.click("#submit")
        self.page.wait_for_selector("#verdict[data-verdict]", timeout=60_000)
        return self.page.get_attribute("#verdict", "data-verdict") or ""
