"""SQLite's settings: the bench's immediate transactions and write-ahead log are opt-in, the default stays as it was;
test runs side by side each name their own test database file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READ = (
    "import json, django; from django.conf import settings; django.setup();"
    "print(json.dumps(settings.DATABASES['default']))"
)


def _database(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "WARPLAB_SQLITE_WAL", "WARPLAB_TEST_DB")}
    clean |= {"DJANGO_SETTINGS_MODULE": "labsite.settings", "SECRET_KEY": "x", **env}
    done = subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _options(**env: str) -> dict:
    return _database(**env)["OPTIONS"]


def test_by_default_transactions_are_deferred_and_the_journal_is_sqlites_own():
    options = _options()
    assert "transaction_mode" not in options and "init_command" not in options


def test_the_bench_turns_immediate_transactions_and_the_write_ahead_log_on():
    options = _options(WARPLAB_SQLITE_WAL="1")
    assert options["transaction_mode"] == "IMMEDIATE" and "journal_mode=WAL" in options["init_command"]


def test_two_test_runs_side_by_side_can_name_two_test_database_files(tmp_path):
    assert _database()["TEST"]["NAME"] == str(ROOT / ".run" / "test-db.sqlite3")
    own = tmp_path / "test-db-browser.sqlite3"
    assert _database(WARPLAB_TEST_DB=str(own))["TEST"]["NAME"] == str(own)
