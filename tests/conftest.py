"""Shared test set-up: markers that skip without a GPU or a browser, and a broker prefix per test."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

# The SQLite test database is a file here, so worker processes the tests start can share it.
RUN_DIR = Path(__file__).resolve().parent.parent / ".run"
RUN_DIR.mkdir(exist_ok=True)


def _gpu_available() -> bool:
    if not shutil.which("nvidia-smi"):
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def chromium_path() -> str | None:
    return os.environ.get("PLAYWRIGHT_CHROMIUM") or shutil.which("chromium")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    has_gpu = _gpu_available()
    has_browser = chromium_path() is not None
    for item in items:
        if "gpu" in item.keywords and not has_gpu:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU: run `pytest -m gpu` on the device tool"))
        if "e2e" in item.keywords and not has_browser:
            item.add_marker(pytest.mark.skip(reason="needs Debian's chromium (apt-get install chromium)"))


@pytest.fixture
def broker_prefix() -> Iterator[str]:
    """A broker key prefix of this test alone (under this run's), so its queues and heartbeats meet no other's."""
    from django.conf import settings

    prefix = f"{settings.CELERY_BROKER_TRANSPORT_OPTIONS['global_keyprefix']}{uuid.uuid4().hex[:8]}-"
    yield prefix
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:
        if keys := list(client.scan_iter(match=f"{prefix}*")):
            client.delete(*keys)
