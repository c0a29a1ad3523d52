"""SQLite's settings: transactions take the write lock when they begin; the bench's write-ahead log is opt-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READ = (
    "import json, django; from django.conf import settings; django.setup();"
    "print(json.dumps(settings.DATABASES['default']['OPTIONS']))"
)


def _options(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "WARPLAB_SQLITE_WAL")}
    clean |= {"DJANGO_SETTINGS_MODULE": "labsite.settings", "SECRET_KEY": "x", **env}
    done = subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_transactions_are_immediate_and_the_journal_is_the_default():
    options = _options()
    assert options["transaction_mode"] == "IMMEDIATE" and "init_command" not in options


def test_the_bench_turns_the_write_ahead_log_on():
    assert "journal_mode=WAL" in _options(WARPLAB_SQLITE_WAL="1")["init_command"]
