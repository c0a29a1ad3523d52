"""SQLite's settings: the bench's immediate transactions and write-ahead log are opt-in, the default stays as it was."""

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


def test_by_default_transactions_are_deferred_and_the_journal_is_sqlites_own():
    options = _options()
    assert "transaction_mode" not in options and "init_command" not in options


def test_the_bench_turns_immediate_transactions_and_the_write_ahead_log_on():
    options = _options(WARPLAB_SQLITE_WAL="1")
    assert options["transaction_mode"] == "IMMEDIATE" and "journal_mode=WAL" in options["init_command"]
