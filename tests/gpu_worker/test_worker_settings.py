"""A worker reads the project's .env as the site does (the environment winning), and only its own fields."""

from __future__ import annotations

from pathlib import Path

from gpu_worker.settings import ENV_FILE, WorkerSettings

ROOT = Path(__file__).resolve().parents[2]
BROKER_NAMES = ("WARPLAB_BROKER_URL", "CELERY_BROKER_URL", "REDIS_URL", "WARPLAB_BROKER_PREFIX", "WARPLAB_POOL")


def test_a_broker_written_in_env_reaches_the_worker_and_the_environment_wins(tmp_path, monkeypatch):
    for name in BROKER_NAMES:
        monkeypatch.delenv(name, raising=False)
    env = tmp_path / ".env"
    env.write_text(
        "DEBUG=1\nSECRET_KEY=the-sites-secret\nDATABASE_URL=postgres://postgres@127.0.0.1:5432/warplab\n"
        "REDIS_URL=redis://127.0.0.1:6390/0\nWARPLAB_BROKER_PREFIX=site1-\nWARPLAB_POOL=h200.full\n"
    )
    monkeypatch.setenv("WARPLAB_POOL", "sim")  # ./lab up names each worker's pool in its environment
    settings = WorkerSettings(_env_file=env)
    assert settings.broker_url == "redis://127.0.0.1:6390/0" and settings.broker_prefix == "site1-"
    assert settings.pool == "sim" and settings.queue == "sim"
    dumped = settings.model_dump_json()
    assert "the-sites-secret" not in dumped and "postgres" not in dumped


def test_the_env_file_is_the_one_beside_manage_py():
    assert ENV_FILE == ROOT / ".env" and (ROOT / "manage.py").is_file()
    assert WorkerSettings.model_config["env_file"] == ENV_FILE
