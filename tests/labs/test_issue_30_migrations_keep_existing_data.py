"""Issue 30's migrations on a database that has data: runs made before get a public id each, all different, and
an instructors' group that could read every run (as `ensure_roles` used to make it) no longer can."""

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("labs", "0013_exercise_course")]
AFTER = [("labs", "0015_instructors_read_their_courses_runs_only")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_old_runs_get_their_own_public_ids_and_instructors_lose_every_runs_permission():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes("labs")
    old = _migrate(BEFORE)
    try:
        User, Group, Permission = (old.get_model("auth", m) for m in ("User", "Group", "Permission"))
        Module, Exercise, Submission = (old.get_model("labs", m) for m in ("Module", "Exercise", "Submission"))
        alice = User.objects.create(username="alice")
        module = Module.objects.create(number=99, slug="m", title="M")
        exercise = Exercise.objects.create(
            uuid=uuid.uuid4(), slug="e", module=module, title="E", entry="f", statement="", statement_html=""
        )
        runs = [Submission.objects.create(owner=alice, exercise=exercise, language="numba", source="x") for _ in "abc"]
        instructors = Group.objects.create(name="instructors")
        view_all = Permission.objects.get(codename="view_all_submissions", content_type__app_label="labs")
        instructors.permissions.add(view_all)
        admins = Group.objects.create(name="admins")
        admins.permissions.add(view_all)

        new = _migrate(AFTER)
        ids = list(
            new.get_model("labs", "Submission")
            .objects.filter(pk__in=[r.pk for r in runs])
            .values_list("public_id", flat=True)
        )
        assert len(set(ids)) == 3 and None not in ids
        groups = new.get_model("auth", "Group").objects
        assert not groups.get(name="instructors").permissions.filter(codename="view_all_submissions").exists()
        assert groups.get(name="admins").permissions.filter(codename="view_all_submissions").exists()
    finally:
        _migrate(latest)
