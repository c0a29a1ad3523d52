"""alice's draft is kept on the server as she types: it opens in another browser, and the browser whose older
copy loses keeps that copy under "Drafts kept" (issue 30, item 5)."""

import pytest

from labs.models import SourceDraft
from tests.e2e.browser import BrowserTestCase
from tests.labs.factories import PASSWORD

AT_THE_LAB = "# typed at the lab\nfrom numba import cuda\n"
AT_HOME = "# typed at home\nfrom numba import cuda\n"


@pytest.mark.e2e
@pytest.mark.integration
class DraftsFollowTheStudentTests(BrowserTestCase):
    def open_vector_add(self, page) -> None:
        page.goto(f"{self.live_server_url}/exercises/vector-add/")
        page.wait_for_selector(".cm-content")

    def type_draft(self, page, text: str) -> None:
        page.click(".cm-content")
        page.keyboard.press("Control+A")
        page.keyboard.press("Delete")
        page.keyboard.insert_text(text)
        # saved once typing pauses (debounced), and said under the editor
        page.wait_for_selector("#draft-status[data-state=saved]", timeout=10_000)

    def test_alices_draft_opens_in_another_browser_and_the_older_copy_is_kept(self):
        lab = self.log_in()
        self.open_vector_add(lab)
        self.type_draft(lab, AT_THE_LAB)
        assert SourceDraft.objects.get(owner=self.alice, exercise__slug="vector-add", language="numba").source == (
            AT_THE_LAB
        )

        home_context = self.browser.new_context()  # another browser: nothing of the first one's storage
        home = home_context.new_page()
        home.goto(f"{self.live_server_url}/accounts/login/")
        home.fill("input[name=username]", "alice")
        home.fill("input[name=password]", PASSWORD)
        home.click("#login")
        home.wait_for_url(f"{self.live_server_url}/")
        self.open_vector_add(home)
        assert home.evaluate("window.warplab.getSource()") == AT_THE_LAB
        self.type_draft(home, AT_HOME)
        home_context.close()

        lab.reload()  # the lab's copy is older than the server's: the server's opens, the lab's is kept
        lab.wait_for_selector(".cm-content")
        assert lab.evaluate("window.warplab.getSource()") == AT_HOME
        kept = lab.locator("#kept-drafts li", has_text="this browser's copy")
        assert kept.count() == 1
        kept.locator("button").click()
        lab.wait_for_selector("#past:not([hidden]) #past-editor .cm-content")
        assert lab.inner_text("#past-editor .cm-content").startswith("# typed at the lab")
        assert SourceDraft.objects.filter(owner=self.alice).count() == 1  # one draft per exercise and language
        assert self.console_errors == []
