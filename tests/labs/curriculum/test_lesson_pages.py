"""A module's page shows its lesson with the figures it names; the machine figure draws a live GPU worker's facts.

Heartbeats are written with `gpu_worker.worker.heartbeat`'s own `Heart` into real Redis,
under a broker prefix of each test alone.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import redis
from django.core.management import CommandError, call_command

from gpu_worker.measurement import calibrate
from gpu_worker.worker import heartbeat
from labs.curriculum.lessons.registry import render_lesson
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db


def _figures(page: str) -> list[dict]:
    match = re.search(r'<script id="lesson-figures" type="application/json">(.*?)</script>', page, re.S)
    assert match, "no lesson figures on the page"
    return json.loads(match.group(1))


def test_alice_reads_module_ones_lesson_with_its_figures(alice, labs_loaded):
    page = client_for(alice).get("/modules/silicon/").content.decode()
    assert "A throughput machine, not a fast CPU" in page
    assert page.count('class="lesson-figure"') == 2
    names = [f["name"] for f in _figures(page)]
    assert names == ["silicon-hierarchy", "silicon-machines"]
    assert 'href="/exercises/vector-add/"' in page


def test_without_a_live_gpu_worker_the_machine_figure_says_datasheets_only(alice, labs_loaded, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens: the fleet cannot be read
    page = client_for(alice).get("/modules/silicon/").content.decode()
    table = _figures(page)[1]["figure"]
    assert "no GPU worker is live" in table["layout"]["meta"]["source"]
    assert [c for c in table["data"][0]["header"]["values"] if c][0] == "NVIDIA A100 SXM 80GB"


@pytest.mark.integration
def test_a_live_gpu_workers_slice_is_the_first_machine(alice, labs_loaded, broker_prefix, settings):
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": broker_prefix}
    calibration = {
        "key": {"uuid": "GPU-1234", "driver": "580.1", "name": "NVIDIA H200"},
        "measured_at": "2026-12-02T17:00:00+00:00",
        "ceilings": calibrate.ANCHORS["NVIDIA H200"],
        "device": {"name": "NVIDIA H200", "sm_count": 132, "regs_per_sm": 65536, "shared_per_sm": 233472,
                   "l2_bytes": 62914560, "memory_bytes": 150 * 2**30, "max_threads_per_sm": 2048,
                   "sm_clock_max_mhz": 1980, "uuid": "GPU-1234"},
    }  # fmt: skip
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:
        heart = heartbeat.Heart(
            client, prefix=broker_prefix, name="gpu.h200.full@a", queue="gpu.h200.full", pool="h200.full",
            backend="cuda", interval=10,
        )  # fmt: skip
        heart.set(heartbeat.decide(calibration))
        try:
            page = client_for(alice).get("/modules/silicon/").content.decode()
        finally:
            heart.stop()
    table = _figures(page)[1]["figure"]["data"][0]
    assert table["header"]["values"][1] == "NVIDIA H200"
    column = table["cells"]["values"][1]
    assert column[0] == "132 SMs" and column[3] == "256 KiB" and column[8] == "1980 MHz"
    assert "4.62 TB/s" in column  # the HBM read it measured, not the datasheet's 4.8


def test_a_lesson_naming_an_unknown_figure_fails_sync_naming_the_file(tmp_path: Path, settings):
    content = tmp_path / "content"
    shutil.copytree(settings.WARPLAB_CONTENT_DIR, content)
    (content / "01-silicon" / "lesson.md").write_text("# Hi\n\n{{figure:no-such-figure}}\n")
    with pytest.raises(CommandError) as err:
        call_command("sync_labs", content=str(content))
    assert "lesson.md" in str(err.value) and "no-such-figure" in str(err.value)


def test_lesson_markdown_is_sanitised_and_figure_slots_are_the_only_markup_added():
    lesson = render_lesson("<script>alert(1)</script>\n\n**a**\n\n{{figure:bank-padding}}\n\nb\n")
    assert "<script>" not in lesson.html and "<strong>a</strong>" in lesson.html
    assert '<figure class="lesson-figure" id="lesson-figure-1" data-figure="bank-padding"></figure>' in lesson.html
    assert lesson.figures[0]["figure"]["data"][0]["y"][4:6] == [32, 1]  # [32][32] conflicts 32-way, [32][33] none
