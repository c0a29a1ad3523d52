"""`sync_labs` loads lab folders idempotently by uuid and names the file and field of a bad one."""

import shutil
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import CommandError, call_command

from labs.curriculum.services import sync_labs
from labs.models import Exercise, Module

pytestmark = pytest.mark.django_db


def test_it_loads_the_six_modules_and_vector_add():
    report = sync_labs()
    assert "vector-add" in report.created
    assert list(Module.objects.values_list("number", flat=True)) == [1, 2, 3, 4, 5, 6]
    exercise = Exercise.objects.get(slug="vector-add")
    assert exercise.module.number == 1
    assert set(exercise.languages) == {"numba", "cuda", "triton"}
    assert "TODO" in exercise.starters["numba"] and "__global__" in exercise.starters["cuda"]
    assert "@triton.jit" in exercise.starters["triton"] and exercise.harness["triton"]["constexprs"] == {"BLOCK": 1024}
    assert exercise.harness["work"]["bytes"].startswith("12 * n")


def test_running_it_twice_changes_nothing():
    sync_labs()
    first = Exercise.objects.get(slug="vector-add").updated_at
    report = sync_labs()
    assert report.created == [] and report.updated == []
    assert Exercise.objects.get(slug="vector-add").updated_at == first


def test_it_renders_the_statement_as_sanitised_html(tmp_path: Path):
    content = tmp_path / "content"
    shutil.copytree(settings.WARPLAB_CONTENT_DIR, content)
    readme = content / "01-silicon" / "vector-add" / "README.md"
    readme.write_text("# Hi\n\n<script>alert(1)</script>\n\n**bold**")
    sync_labs(content)
    html = Exercise.objects.get(slug="vector-add").statement_html
    assert "<strong>bold</strong>" in html and "<script>" not in html


def test_a_bad_folder_fails_naming_the_file_and_the_field(tmp_path: Path):
    content = tmp_path / "content"
    shutil.copytree(settings.WARPLAB_CONTENT_DIR, content)
    lab_yaml = content / "01-silicon" / "vector-add" / "lab.yaml"
    data = yaml.safe_load(lab_yaml.read_text())
    data["work"]["bytes"] = "12 * m"
    lab_yaml.write_text(yaml.safe_dump(data))
    with pytest.raises(CommandError) as err:
        call_command("sync_labs", content=str(content))
    assert "lab.yaml" in str(err.value) and "work.bytes" in str(err.value) and "'m'" in str(err.value)
    assert not Exercise.objects.exists()


def test_a_missing_field_is_named(tmp_path: Path):
    content = tmp_path / "content"
    shutil.copytree(settings.WARPLAB_CONTENT_DIR, content)
    lab_yaml = content / "01-silicon" / "vector-add" / "lab.yaml"
    data = yaml.safe_load(lab_yaml.read_text())
    del data["entry"]
    lab_yaml.write_text(yaml.safe_dump(data))
    with pytest.raises(CommandError, match=r"lab.yaml: field 'entry': Field required"):
        call_command("sync_labs", content=str(content))
