"""ada, in a real browser: drains the sim worker from the fleet page and undrains it (its heartbeat says so each
time), then registers an LMS on the LTI platforms page, whose key set was published before (issue 30, item 10)."""

import os

import pytest

from labs.models import LtiPlatform
from tests.e2e.browser import BrowserTestCase
from tests.labs.factories import make_admin

WORKER = f"sim-e2e-{os.getpid()}@test"


@pytest.mark.e2e
@pytest.mark.integration
class AdminDrainsAWorkerAndRegistersAnLmsTests(BrowserTestCase):
    sim_env = {"WARPLAB_WORKER_NAME": WORKER, "WARPLAB_HEARTBEAT_SECONDS": "1"}

    def wait_for_state(self, page, state: str) -> None:
        """The fleet page reloaded until the worker's heartbeat says `state` (a beat is a second here)."""
        for _ in range(20):
            page.goto(f"{self.live_server_url}/fleet/")
            if f"· {state}" in page.inner_text(f"#worker-{self.slug}"):
                return
            page.wait_for_timeout(500)
        raise AssertionError(f"{WORKER} never said {state}: {page.inner_text(f'#worker-{self.slug}')}")

    def test_ada_drains_and_undrains_the_sim_worker_then_registers_an_lms(self):
        make_admin("ada")
        page = self.log_in("ada")
        self.slug = WORKER.replace("@", "").replace(".", "")
        self.wait_for_state(page, "serving")
        page.click(f"#worker-{self.slug} button[value=drain]")
        assert "answered “no longer consuming from sim”" in page.inner_text("#messages")
        self.wait_for_state(page, "draining")
        page.click(f"#worker-{self.slug} button[value=undrain]")
        assert "it takes jobs again" in page.inner_text("#messages")
        self.wait_for_state(page, "serving")

        page.click("#lti-platforms-link")
        page.wait_for_selector("#platform-form")
        jwks_url = page.inner_text("#tool-jwks-url")
        published = page.request.get(jwks_url).json()["keys"]
        assert [key["kid"] for key in published] == [page.inner_text("#tool-kid")]
        form = {
            "name": "Moodle",
            "issuer": "https://moodle.example.test",
            "client_id": "abc123",
            "auth_login_url": "https://moodle.example.test/mod/lti/auth.php",
            "auth_token_url": "https://moodle.example.test/mod/lti/token.php",
            "key_set_url": "https://moodle.example.test/mod/lti/certs.php",
            "deployment_ids": "7",
        }
        for name, value in form.items():
            page.fill(f"#platform-form [name={name}]", value)
        page.click("#register-platform")
        page.wait_for_selector("#platforms li[data-issuer='https://moodle.example.test']")
        assert "Registered Moodle" in page.inner_text("#messages")
        assert LtiPlatform.objects.get().deployment_ids == ["7"]
        assert page.request.get(jwks_url).json()["keys"] == published
        assert self.console_errors == []
