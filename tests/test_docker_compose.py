"""docker-compose.yml describes the production shape (there is no Docker engine here, so it is parsed)."""

from pathlib import Path

import yaml

COMPOSE = yaml.safe_load((Path(__file__).resolve().parent.parent / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def test_it_has_the_web_the_broker_the_database_and_the_workers():
    assert {"web", "redis", "postgres", "worker-web", "worker-sim", "worker-gpu-h200"} <= set(SERVICES)


def test_the_web_runs_daphne_on_postgres():
    assert "daphne" in SERVICES["web"]["command"]
    assert SERVICES["web"]["environment"]["DATABASE_URL"].startswith("postgres://")


def test_the_gpu_worker_reserves_an_nvidia_device_and_carries_its_slice():
    gpu = SERVICES["worker-gpu-h200"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    assert gpu["environment"]["WARPLAB_BACKEND"] == "cuda" and gpu["environment"]["WARPLAB_POOL"]


def test_workers_get_no_secrets():
    for name in ("worker-sim", "worker-gpu-h200"):
        env = SERVICES[name]["environment"]
        assert not {"SECRET_KEY", "DATABASE_URL"} & set(env), name
        assert env["WARPLAB_BROKER_URL"].startswith("redis://")
