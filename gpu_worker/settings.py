"""The worker's settings, from its environment and the project's .env (pydantic-settings); no secret but the broker.

The environment wins over .env, which `./lab up` and the web side read too, so a broker URL or prefix
written there reaches the workers as well as the site. Only the fields below are read from it: the
web's SECRET_KEY or DATABASE_URL never enter a worker's settings, let alone a learner's sandbox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_FILE = Path(__file__).resolve().parent.parent / ".env"  # absent in a container: the environment alone


class WorkerSettings(BaseSettings):
    """One worker serves one slice: a pool name, the backend it runs and the queue it consumes."""

    model_config = SettingsConfigDict(env_prefix="WARPLAB_", extra="ignore", env_file=ENV_FILE)

    broker_url: str = Field(
        default="redis://127.0.0.1:6379/0",
        validation_alias=AliasChoices("WARPLAB_BROKER_URL", "CELERY_BROKER_URL", "REDIS_URL"),
    )
    backend: Literal["sim", "cuda"] = "sim"
    pool: str = "sim"  # "sim", or a GPU pool such as "h200.full" or "h200.mps30"
    gpus: int = Field(
        default=1, ge=1
    )  # GPUs this worker owns (gpu_worker.isolation.placement), with CUDA_VISIBLE_DEVICES
    # What this worker's slice is, as the fleet planner exported it: mps and timeslice share the GPU,
    # so every timing taken there is flagged "shared GPU: indicative". Empty: not said (a whole GPU).
    slice_kind: Literal["", "full", "mig", "mps", "timeslice"] = ""
    worker_name: str = ""  # the Celery node name; empty: <queue>@<host>. The planner's exports set one per slice
    results_queue: str = "web"
    # How long a run's first unsent event waits for the ones after it, to go to the web side as one task
    # (`service._Reporter`): events come in bursts (compiled, occupancy and figures at once; a size's check and
    # timing), and under a class's load one task per event queued the claims of every job behind them.
    # 0 sends each event as it comes.
    event_linger_seconds: float = Field(default=0.02, ge=0.0, le=1.0)
    # Where the web side answers a worker's claim on a job (its job ledger); empty: the broker.
    result_backend: str = Field(
        default="", validation_alias=AliasChoices("WARPLAB_RESULT_BACKEND", "CELERY_RESULT_BACKEND")
    )
    claim_timeout: float = 30.0  # how long a worker waits for that answer before it requeues the delivery
    claim_retry_seconds: float = 2.0  # the pause before such a requeue, so an absent web side is not spun on
    broker_prefix: str = ""  # the web side's WARPLAB_BROKER_PREFIX: both must name the same queues
    # Celery's limits sit above the sandbox's own wall-clock limit and below the broker's
    # visibility timeout, so a lost worker's job is redelivered rather than run twice at once.
    soft_time_limit: int = 240
    hard_time_limit: int = 300
    visibility_timeout: int = 900
    restore_seconds: int = 30  # how often this worker looks for such jobs of dead consumers to restore
    # The heartbeat key lives three intervals, so one missed beat does not drop the worker from the fleet.
    heartbeat_seconds: float = 10.0
    # A cached calibration of the same GPU and driver is reused while younger than this; a healthy one
    # older than that but younger than `calibration_serve_age` is served at once while the worker
    # measures again in the background (a cold worker is ready in seconds, not after a calibration).
    calibration_max_age: float = 24 * 3600.0
    calibration_serve_age: float = 7 * 24 * 3600.0
    calibration_timeout: float = 600.0  # one calibration subprocess, CUDA start-up and compilation included
    recalibrate_seconds: float = 600.0  # how often a worker out of service measures again
    remeasure_pause_seconds: float = 20.0  # idle before a low reading is measured once more (the card cools)

    @property
    def queue(self) -> str:
        return "sim" if self.pool == "sim" else f"gpu.{self.pool}"
