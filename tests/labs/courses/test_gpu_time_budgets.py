"""GPU-time budgets (issue 30, item 9): ian sets each student's and the whole course's GPU-seconds a day or a week
under the ceiling ada sets; a run is charged the time it held a GPU; alice is told what is left beside her place
in the queue and refused, saying why, when it is spent; the CPU tier stays free; the dashboard shows each course's
spend."""

import html
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from labs.fleet import budgets
from labs.models import Course, Exercise, Submission
from tests.labs.courses.factories import fast_passwords, make_course, run_at  # noqa: F401
from tests.labs.factories import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]

GPU = "gpu.h200.full"
RUN = {"exercise": "vector-add", "language": "numba", "source": "x = 1\n"}


@pytest.fixture
def course(ian, alice, bob, labs_loaded, settings):
    settings.WARPLAB_GPU_SECONDS_PER_DAY = 0  # only the course's own budgets here
    settings.WARPLAB_RUNS_PER_MINUTE = 0
    return make_course(ian, students=(alice, bob))


def held(owner, seconds: float, ago: timedelta = timedelta(hours=1), queue: str = GPU) -> Submission:
    """A finished run that held its slice for `seconds`, finished `ago`."""
    run = run_at(owner, timezone.now() - ago - timedelta(seconds=seconds), queue=queue)
    finished = timezone.now() - ago
    Submission.objects.filter(pk=run.pk).update(started_at=finished - timedelta(seconds=seconds), finished_at=finished)
    return run


def on_the_gpu(slug: str = "vector-add") -> None:
    Exercise.objects.filter(slug=slug).update(pool=GPU)


def budget(client, course, period="day", per_student="", together=""):
    return client.post(
        f"/courses/{course.slug}/people",
        {
            "action": "gpu_budget",
            "gpu_period": period,
            "gpu_seconds_per_student": per_student,
            "gpu_seconds_for_course": together,
        },
    )


def submit(user):
    return client_for(user).post("/api/submissions", data=json.dumps(RUN), content_type="application/json")


def test_alice_over_her_weekly_seconds_is_refused_on_the_gpu_and_still_runs_on_the_cpu_tier(course, ian, alice):
    assert budget(client_for(ian), course, "week", per_student="100").status_code == 302
    held(alice, 120, ago=timedelta(days=3))  # three days ago: inside the week
    held(alice, 500, queue="sim")  # the CPU tier is never charged
    on_the_gpu()
    refused = submit(alice)
    assert refused.status_code == 429
    assert refused.json()["error"].startswith(
        "No GPU time left: 120 of your 100 GPU-seconds in GPU Programming for the last 7 days are spent."
    )
    assert "Runs on the CPU tier are free." in refused.json()["error"]
    Exercise.objects.filter(slug="vector-add").update(pool="sim")
    assert submit(alice).status_code == 201

    budget(client_for(ian), course, "day", per_student="100")  # a day: the run of three days ago is outside it
    on_the_gpu()
    Submission.objects.filter(owner=alice).update(status="done")
    assert submit(alice).status_code == 201


def test_what_is_left_is_said_beside_her_place_in_the_queue_on_the_exercise_and_the_course_page(course, ian, alice):
    budget(client_for(ian), course, "week", per_student="600", together="5000")
    held(alice, 40)
    mine = client_for(alice)
    left = "GPU time left: 560 of your 600 GPU-seconds in GPU Programming for the last 7 days"
    assert left in mine.get(f"/courses/{course.slug}/").content.decode()
    assert left in mine.get("/exercises/vector-add/").content.decode()
    on_the_gpu()
    created = submit(alice).json()
    queued = mine.get(f"/api/submissions/{created['id']}").json()["events"][0]
    assert queued["type"] == "queued" and queued["ahead"] == 0
    assert queued["message"].startswith("No worker is serving gpu.h200.full right now.")  # no worker here
    assert "0 ahead of you; no worker serves this queue now." in queued["message"]  # the place, then what is left
    assert f"{left}, about " in queued["message"] and "more runs at about 40 s a run" in queued["message"]


def test_the_whole_course_budget_is_spent_by_all_its_students(course, ian, alice, bob):
    budget(client_for(ian), course, "day", together="100")
    held(bob, 70)
    held(alice, 40)
    on_the_gpu()
    refused = submit(alice)
    assert refused.status_code == 429
    assert "110 of GPU Programming's 100 GPU-seconds (all its students together)" in refused.json()["error"]


def test_the_admins_ceiling_bounds_the_instructor_and_is_the_course_budget_when_he_sets_none(course, ian, ada, alice):
    assert (
        client_for(ian)
        .post(f"/courses/{course.slug}/people", {"action": "gpu_ceiling", "gpu_seconds_ceiling": "50"})
        .status_code
        == 403
    )
    client_for(ada).post(f"/courses/{course.slug}/people", {"action": "gpu_ceiling", "gpu_seconds_ceiling": "50"})
    too_much = budget(client_for(ian), course, "day", together="150")
    assert (
        too_much.status_code == 400
        and "The admins cap this course at 50 GPU-seconds a day" in too_much.content.decode()
    )
    assert Course.objects.get(pk=course.pk).gpu_seconds_for_course is None
    held(alice, 60)
    with pytest.raises(budgets.OverGpuBudget) as refused:
        budgets.check(alice, GPU)
    assert "60 of GPU Programming's 50 GPU-seconds" in refused.value.message


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"per_student": "ten"}, "a whole number of GPU-seconds"),
        ({"per_student": "-5"}, "a whole number of GPU-seconds"),
        ({"per_student": "200", "together": "100"}, "Each student's 200 GPU-seconds is more than the course's 100"),
        ({"period": "month"}, "for day or week"),
    ],
)
def test_a_budget_that_makes_no_sense_is_refused_with_a_reason(course, ian, fields, words):
    response = budget(client_for(ian), course, **fields)
    assert response.status_code == 400 and words in html.unescape(response.content.decode())


def test_the_dashboard_shows_each_courses_spend_over_the_day_and_the_week(course, ian, ada, alice, bob):
    budget(client_for(ian), course, "week", per_student="300", together="1000")
    held(alice, 30)
    held(bob, 45, ago=timedelta(days=2))
    held(bob, 999, queue="sim")
    page = client_for(ada).get("/fleet/dashboard/").content.decode()
    row = page[page.index(f'data-course="{course.slug}"') :].split("</tr>")[0]
    assert '<td class="day">30 s</td>' in row and '<td class="week">75 s</td>' in row
    assert "300 s a week" in row and "1000 s a week" in row
    staff_page = client_for(ian).get(f"/courses/{course.slug}/").content.decode()
    assert "<strong>30 s</strong> in the last 24 hours and <strong>75 s</strong> in the last 7 days" in staff_page
