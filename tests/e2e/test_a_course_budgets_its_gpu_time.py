"""GPU-time budgets in a real browser (issue 30, item 9): ian sets each student's GPU-seconds a week on his course
page, above what ada's ceiling allows first and is told so; alice then sees what is left on her course page and
beside the editor, and her run on the CPU tier costs none of it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from gpu_worker.exercise.labspec import find_lab
from labs.models import Course, Submission
from tests.e2e.browser import BrowserTestCase
from tests.labs.courses.factories import make_course, run_at
from tests.labs.factories import make_instructor

REFERENCE = {case.name: case for case in find_lab("vector-add").cases}["reference-numba"].source


@pytest.mark.e2e
@pytest.mark.integration
class CourseBudgetsItsGpuTimeTests(BrowserTestCase):
    def test_ian_budgets_his_course_and_alice_sees_what_is_left(self):
        ian = make_instructor("ian")
        course = make_course(ian, students=(self.alice,))
        Course.objects.filter(pk=course.pk).update(gpu_seconds_ceiling=1000)  # an admin's, set on the same page
        run = run_at(self.alice, timezone.now() - timedelta(hours=2))  # 90 s on a GPU two hours ago
        finished = timezone.now() - timedelta(hours=2)
        Submission.objects.filter(pk=run.pk).update(started_at=finished - timedelta(seconds=90), finished_at=finished)

        page = self.log_in("ian")
        page.goto(f"{self.live_server_url}/courses/{course.slug}/")
        assert "held a GPU for 90 s in the last 24 hours" in page.inner_text("#gpu-spent")
        page.select_option("#gpu-budget-form select[name=gpu_period]", "week")
        page.fill("#gpu-budget-form input[name=gpu_seconds_per_student]", "600")
        page.fill("#gpu-budget-form input[name=gpu_seconds_for_course]", "5000")
        with page.expect_navigation():
            page.click("#save-gpu-budget")
        assert "The admins cap this course at 1000 GPU-seconds a week" in page.inner_text("#form-error")
        page.fill("#gpu-budget-form input[name=gpu_seconds_for_course]", "")  # the ceiling is the course's then
        with page.expect_navigation():  # the page again, the same ids on it: wait for the new one
            page.click("#save-gpu-budget")
        assert "each student 600 s, all together 1000 s a week" in page.inner_text("#gpu-spent")
        assert page.locator("#gpu-ceiling-form").count() == 0  # the ceiling is ada's to set
        self.context.clear_cookies()

        page = self.log_in("alice")
        page.goto(f"{self.live_server_url}/courses/{course.slug}/")
        mine = page.inner_text("#my-gpu-time")
        assert "GPU time left: 510 of your 600 GPU-seconds in GPU Programming for the last 7 days." in mine
        assert "GPU time left: 910 of GPU Programming's 1000 GPU-seconds (all its students together)" in mine
        page.goto(f"{self.live_server_url}/exercises/vector-add/")
        beside = page.inner_text("#gpu-budget")
        assert beside.startswith("GPU time left: 510 of your 600 GPU-seconds in GPU Programming for the last 7 days")
        assert "Runs on the CPU tier are free." in beside
        assert self.submit(REFERENCE) == "accepted"  # on the simulator: nothing charged
        page.reload()
        assert page.inner_text("#gpu-budget").startswith("GPU time left: 510 of your 600")
        refused = "the server responded with a status of 400"  # ian's budget over the ceiling: the page said why
        assert [e for e in self.console_errors if refused not in e] == []
