"""The instructor's main journey in a real browser: a course, students by CSV and by join code, an assignment of
three exercises with an extension, a student's run, the gradebook, the CSV export and the leaderboard; and issue 30's
journey with no GPU lane at all: a student enrolled by CSV sets a password from the invitation, a correctness
assignment is graded on the CPU tier (a run of the simulator fallback shown as not counted, with the reason), an
extension, feedback the student reads, and the gradebook exported with the student's points."""

import csv
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from gpu_worker.exercise.labspec import find_lab
from tests.e2e.browser import BrowserTestCase
from tests.labs.courses.factories import make_course
from tests.labs.factories import make_instructor

REFERENCE = {case.name: case for case in find_lab("vector-add").cases}["reference-numba"]
# A float64 `math.sin` compiles to a call of libdevice's slow path, which the PTX executor does not run: the CPU
# tier falls back to Numba's simulator for it.
FALLBACK = REFERENCE.source.replace("from numba import cuda", "import math\n\nfrom numba import cuda").replace(
    "c[i] = a[i] + b[i]", "c[i] = a[i] + b[i] + 0.0 * math.sin(a[i] * 1000.0)"
)


def _local(when) -> str:
    return when.strftime("%Y-%m-%dT%H:%M")


@pytest.mark.e2e
@pytest.mark.integration
class InstructorJourneyTests(BrowserTestCase):
    def test_ian_runs_a_course_from_creation_to_the_gradebook(self):
        page, course_url = self._ians_new_course()
        page.fill("#roster-text", "username,email,phone\nbob,bob@example.org,1\n")
        page.click("#enrol-roster")
        assert "unknown column 'phone'" in page.inner_text("#form-error")
        page.fill("#roster-text", "username,email,group\nbob,bob@example.org,s1\n")
        page.click("#enrol-roster")
        assert "Enrolled 1 (bob); new accounts: bob" in page.inner_text("#roster-report")
        code = page.inner_text("#join-code-value")

        student = self.browser.new_context().new_page()
        student.goto(f"{self.live_server_url}/accounts/login/")
        student.fill("input[name=username]", "alice")
        student.fill("input[name=password]", "correct-horse-battery")
        student.click("#login")
        student.goto(f"{self.live_server_url}/courses/")
        student.fill("#join-code", code)
        student.click("#join")
        student.wait_for_selector("#course-name")
        assert student.inner_text("#role") == "student"

        page.goto(course_url)
        page.wait_for_selector("#members")
        assert page.locator('#members tr[data-user="alice"]').count() == 1
        page.click("#new-assignment")
        now = timezone.now()
        page.fill("#a-title", "Memory bound")
        page.fill("#a-release", _local(now - timedelta(days=1)))
        page.fill("#a-due", _local(now - timedelta(days=2)))
        for slug in ("vector-add", "coalescing", "transpose"):
            page.check(f"#ex-{slug}")
        page.click("#create-assignment")
        assert "due date is before the release" in page.inner_text("#form-error")
        page.fill("#a-due", _local(now + timedelta(days=7)))
        page.fill("#a-late", "0.8, 0.5")
        for slug in ("vector-add", "coalescing", "transpose"):
            page.check(f"#ex-{slug}")
        page.click("#create-assignment")
        page.wait_for_selector("#assignment-title")
        assert page.locator("#items tr[data-exercise]").count() == 3
        page.fill("#o-student", "bob")
        page.fill("#o-due", _local(now + timedelta(days=9)))
        page.click("#add-override")
        page.wait_for_selector("#overrides")
        assert "bob: due" in page.inner_text("#overrides")
        assignment_url = page.url

        student.goto(assignment_url)
        student.click('#items tr[data-exercise="vector-add"] a')
        student.wait_for_selector(".cm-content")
        self.page, ian_page = student, page
        assert self.submit(REFERENCE.source) == "accepted"

        ian_page.goto(assignment_url)
        ian_page.click("text=Gradebook")
        cell = ian_page.locator('#gradebook tr[data-student="alice"] td[data-exercise="vector-add"]')
        assert "1 attempt" in cell.inner_text()
        cell.locator("a").click()
        ian_page.wait_for_selector(".run")
        assert "practice, indicative: the sim backend" in ian_page.inner_text(".run")
        ian_page.go_back()
        with ian_page.expect_download() as download:
            ian_page.click("#export-canvas")
        header = Path(download.value.path()).read_text().splitlines()[0]
        assert header == "Student,ID,SIS User ID,SIS Login ID,Section,Memory bound"
        ian_page.goto(assignment_url)
        ian_page.click("#leaderboard-link")
        assert "No ranked run yet" in ian_page.inner_text("#board-vector-add")

    def test_ian_authors_a_lab_validates_it_on_sim_and_publishes_it(self):
        course = make_course(make_instructor("ian"))  # a lab is published into a course its author runs
        page = self.log_in("ian")
        page.click("#nav-authoring")
        page.fill("#d-slug", "my-add")
        page.select_option("#d-copy", "vector-add")
        page.click("#create-draft")
        page.wait_for_selector("#draft-slug")
        lab_yaml = page.locator('details[data-path="lab.yaml"] textarea')
        lab_yaml.fill(lab_yaml.input_value().replace("entry:", "entree:"))
        page.click("#save")
        page.click("#validate")
        assert "lab.yaml: field" in page.inner_text("#form-error")
        lab_yaml = page.locator('details[data-path="lab.yaml"] textarea')
        fixed = lab_yaml.input_value().replace("entree:", "entry:")
        lab_yaml.fill(fixed.replace("[numba, cuda, triton]", "[numba, triton]"))
        # every CUDA C++ file goes with the language, and each CUDA C++ case's whole folder (vector-add has more
        # than one, and may get more)
        paths = page.eval_on_selector_all("details[data-path]", "ds => ds.map(d => d.dataset.path)")
        cuda_cases = {p.rsplit("/", 1)[0] for p in paths if p.startswith("tests/") and p.endswith(".cu")}
        assert {"starter.cu", "reference.cu"} <= set(paths) and "tests/syntax-error-cuda" in cuda_cases
        for path in paths:
            if path.endswith(".cu") or path.rsplit("/", 1)[0] in cuda_cases:
                page.check(f'details[data-path="{path}"] input[type=checkbox]')
        page.click("#save")
        page.click("#validate")
        page.wait_for_selector("#validation, #form-error")
        assert page.locator("#form-error").count() == 0, page.inner_text("#form-error")
        for _ in range(120):  # the samples run on the sim worker; the page says where each one is
            if all(a in ("accepted", "wrong_answer", "compile_error") for a in self._actuals(page)):
                break
            page.wait_for_timeout(1000)
            page.reload()
        rows = page.eval_on_selector_all("#validation tr[data-case]", "rs => rs.map(r => r.innerText)")
        assert len(rows) >= 4 and all("✓" in r for r in rows), rows
        page.select_option("#publish-into", course.slug)
        page.click("#publish")
        page.wait_for_selector("#published")
        assert "for the members of GPU Programming only" in page.inner_text("#published")
        page.click("#published a")
        page.wait_for_selector(".cm-content")
        assert all("status of 400" in e for e in self.console_errors)  # only the refused lab.yaml's page

    def test_ian_grades_a_correctness_assignment_on_the_cpu_tier_from_enrolment_to_export(self):
        ian, course_url = self._ians_new_course()
        assert "math.sin(a[i] * 1000.0)" in FALLBACK  # the reference's text as this test expects it
        ian.fill("#roster-text", "username,email\nbob,bob@example.org\n")
        ian.click("#enrol-roster")
        assert "new accounts: bob" in ian.inner_text("#roster-report")
        invitation = ian.get_attribute('#invitations tr[data-username="bob"] input.invitation', "value")

        bob = self.browser.new_context().new_page()
        bob.goto(invitation)
        assert bob.inner_text("#invited-username") == "bob"
        bob.fill("input[name=new_password1]", "warp-drive-42")
        bob.fill("input[name=new_password2]", "warp-drive-42")
        bob.click("#set-password")
        bob.wait_for_selector("#password-set")
        bob.goto(f"{self.live_server_url}/accounts/login/")
        bob.fill("input[name=username]", "bob")
        bob.fill("input[name=password]", "warp-drive-42")
        bob.click("#login")
        bob.wait_for_url(f"{self.live_server_url}/")

        ian.click("#new-assignment")
        assert "the CPU tier's PTX executor" in ian.inner_text("#a-basis-help")
        now = timezone.now()
        ian.fill("#a-title", "Correct first")
        ian.fill("#a-release", _local(now - timedelta(days=1)))
        ian.fill("#a-due", _local(now + timedelta(days=7)))
        ian.check("#ex-vector-add")
        ian.check("#a-basis-correctness")
        ian.click("#create-assignment")
        ian.wait_for_selector("#assignment-title")
        assert ian.get_attribute("#grading-basis", "data-basis") == "correctness"
        extended = now + timedelta(days=9)
        ian.fill("#o-student", "bob")
        ian.fill("#o-due", _local(extended))
        ian.click("#add-override")
        ian.wait_for_selector("#overrides")
        assignment_url = ian.url

        bob.goto(assignment_url)
        assert bob.inner_text("#due") == extended.strftime("%Y-%m-%d %H:%M") and "student override" in bob.inner_text(
            "#dates"
        )
        assert "Graded on correctness" in bob.inner_text("#grading-basis")
        bob.click('#items tr[data-exercise="vector-add"] a')
        bob.wait_for_selector(".cm-content")
        self.page = bob
        assert self.submit(REFERENCE.source) == "accepted"  # on the CPU tier's PTX executor: no GPU worker runs here
        assert self.submit(FALLBACK) == "not_run"  # a float64 sine the executor cannot run: for a GPU lane, not counted

        ian.goto(f"{course_url}gradebook/")
        cell = ian.locator('#gradebook tr[data-student="bob"] td[data-exercise="vector-add"]')
        assert "10.00/10.0" in cell.inner_text() and "accepted on CPU tier: PTX executor" in cell.inner_text()
        cell.locator("a").click()
        ian.wait_for_selector(".run")
        counted, fallback = ian.locator(".run").all()
        assert "counted" in (counted.get_attribute("class") or "") and "score 10.00" in counted.inner_text()
        assert "not counted: the CPU tier cannot run this kernel; a GPU lane can" in fallback.inner_text()
        ian.fill("#feedback-text", "Correct on the executor; drop the float64 sine, the CPU tier cannot run it.")
        ian.click("#send-feedback")
        ian.wait_for_selector("#feedback li:not(.muted)")

        bob.goto(course_url)
        assert "drop the float64 sine" in bob.inner_text(".feedback")
        assert "student override" in bob.inner_text(".extension")
        bob.goto(assignment_url)
        assert "drop the float64 sine" in bob.inner_text("#feedback")
        assert "10.00" in bob.inner_text('#items tr[data-exercise="vector-add"] .score')

        ian.goto(f"{course_url}gradebook/")
        with ian.expect_download() as download:
            ian.click("#export-canvas")
        rows = list(csv.reader(Path(download.value.path()).read_text().splitlines()))
        assert rows[0][-1] == "Correct first" and rows[1][-1] == "10"
        assert [(row[3], row[-1]) for row in rows[2:]] == [("bob", "10")]

    def _ians_new_course(self):
        """ian logged in, on the page of the course he has just created: the page and its URL."""
        make_instructor("ian")
        page = self.log_in("ian")
        page.click("#nav-courses")
        page.fill("#course-title", "GPU Programming")
        page.click("#create-course")
        page.wait_for_selector("#course-name")
        return page, page.url

    @staticmethod
    def _actuals(page) -> list[str]:
        return page.eval_on_selector_all("#validation tr[data-case]", "rs => rs.map(r => r.dataset.actual)")
