"""XSS: 60 payloads in a run's source, program output, compile log, events, the lab statement and user names,
rendered in the student's exercise page, the instructor's course pages and the admin: none runs.

A payload that ran would set `window.__xss` or open a dialog; one that was parsed as markup would leave an
element carrying `data-xss` in the page. The run is stored as a worker would have stored it (no worker is
needed to render it); the browser is Debian's chromium, logged in through the session cookie.
"""

from __future__ import annotations

import pytest
from channels.testing import ChannelsLiveServerTestCase
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import sync_playwright

from labs.courses import services
from labs.curriculum.markdown import render_markdown
from labs.curriculum.services import sync_labs
from labs.models import Exercise, Submission, SubmissionEvent
from labs.models.run import Status
from tests.conftest import chromium_path
from tests.e2e.browser import CHROMIUM_ARGS
from tests.labs.courses.factories import make_assignment, make_course
from tests.labs.factories import make_admin, make_instructor, make_student

RUN = "window.__xss=(window.__xss||0)+1"
TAGS = [
    "<script>{js}</script>",
    '<img src=x data-xss onerror="{js}">',
    '<svg data-xss onload="{js}"></svg>',
    '<iframe data-xss srcdoc="<script>parent.{js}</script>"></iframe>',
    '<body data-xss onload="{js}">',
    '<input data-xss autofocus onfocus="{js}">',
    '<details data-xss open ontoggle="{js}"></details>',
    '<video data-xss><source onerror="{js}"></video>',
    '<a data-xss href="javascript:{js}">x</a>',
    '<math><mtext><table><mglyph><style><img data-xss src=x onerror="{js}">',
    '"><img src=x data-xss onerror="{js}">',
    "'><svg data-xss onload='{js}'>",
    '</textarea><img src=x data-xss onerror="{js}">',
    '</pre><img src=x data-xss onerror="{js}">',
    "</script><script>{js}</script>",
    '<object data-xss data="javascript:{js}"></object>',
    '<embed data-xss src="javascript:{js}">',
    '<form data-xss><button formaction="javascript:{js}">x</button></form>',
    '<marquee data-xss onstart="{js}">x</marquee>',
    '<div data-xss style="width:expression({js})" onmouseover="{js}">x</div>',
]
WRAPPERS = ["{p}", "`{p}`", "[x](javascript:{js}) {p}"]
PAYLOADS = [w.format(p=t.format(js=RUN), js=RUN) for t in TAGS for w in WRAPPERS]  # 60
PAYLOADS += ["{{7*7}} ${alert(1)} <%= 7*7 %>", "javascript:alert(1)", "\u2028\u2029<script>alert(1)</script>"]


@pytest.mark.e2e
@pytest.mark.integration
class NoPayloadRunsTests(ChannelsLiveServerTestCase):
    """Daphne in a subprocess and one headless chromium; no worker (the run is already stored)."""

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

    def _page_as(self, user: User):
        client = Client()
        client.force_login(user)
        context = self.browser.new_context()
        context.add_cookies(
            [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": self.live_server_url}]
        )
        page = context.new_page()
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        return page

    def _assert_nothing_ran(self, page, where: str) -> None:
        page.wait_for_timeout(300)  # onerror/onload handlers fire asynchronously
        ran = page.evaluate("window.__xss || 0")
        parsed = page.evaluate("document.querySelectorAll('[data-xss]').length")
        assert (ran, parsed, self.dialogs) == (0, 0, []), where

    def test_sixty_payloads_render_as_text_everywhere(self):
        sync_labs()
        self.dialogs: list[str] = []
        text = "\n".join(PAYLOADS)
        exercise = Exercise.objects.get(slug="vector-add")
        exercise.statement = text
        exercise.statement_html = render_markdown(text)  # as sync_labs renders a lab's README
        exercise.save()
        alice = make_student("alice")
        ian, ada = make_instructor("ian"), make_admin("ada")
        names = [User.objects.create(username=p[:150]) for p in PAYLOADS[:10]]  # no validator on this path
        course = make_course(ian, title=PAYLOADS[1][:100], students=(alice,))
        assignment = make_assignment(course, ian)
        for named in names:
            services.join_course(named, course.join_code)
        run = Submission.objects.create(
            owner=alice,
            exercise=exercise,
            language="numba",
            source=text,
            queue="sim",
            status=Status.DONE,
            verdict="compile_error",
            result={
                "submission_id": 0,
                "verdict": "compile_error",
                "backend": "sim",
                "device": PAYLOADS[2],
                "message": text,
                "output": text,
                "compile_log": text,
            },
        )
        diagnostics = [{"line": i + 1, "column": 1, "message": p, "file": p} for i, p in enumerate(PAYLOADS)]
        events = [
            {"type": "queued", "message": text, "queue": PAYLOADS[3]},
            {"type": "started", "backend": PAYLOADS[4], "device": PAYLOADS[5]},
            {"type": "compile_error", "message": text, "diagnostics": diagnostics, "log": text},
            {"type": "log", "text": text, "stream": "stdout"},
            {"type": "check", "passed": False, "message": text, "mismatches": [{"index": p} for p in PAYLOADS[:5]]},
            {"type": "done", "verdict": "compile_error", "message": text},
        ]
        for seq, event in enumerate(events, start=1):
            SubmissionEvent.objects.create(submission=run, seq=seq, type=event["type"], payload=event | {"seq": seq})

        page = self._page_as(alice)
        page.goto(f"{self.live_server_url}/exercises/vector-add/")
        page.wait_for_selector(f"#history li[data-id='{run.public_id}']")
        self._assert_nothing_ran(page, "exercise page")
        page.click(f"#history li[data-id='{run.public_id}']")
        page.wait_for_selector("#events li[data-type=done]")
        assert "<script>" in page.inner_text("#events")  # the payloads are there, as text
        self._assert_nothing_ran(page, "alice's run opened")

        staff = self._page_as(ian)
        for path in (
            f"/courses/{course.slug}/",
            f"/courses/{course.slug}/gradebook/",
            f"/courses/{course.slug}/a/{assignment.slug}/students/alice/",
        ):
            staff.goto(f"{self.live_server_url}{path}")
            self._assert_nothing_ran(staff, path)

        admin = self._page_as(ada)
        for path in ("/admin/auth/user/", f"/admin/labs/submission/{run.pk}/change/", "/admin/labs/exercise/"):
            admin.goto(f"{self.live_server_url}{path}")
            self._assert_nothing_ran(admin, path)
