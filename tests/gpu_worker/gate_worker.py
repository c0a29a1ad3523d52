"""A real Celery worker for the health-gate test: our heartbeat step, a probe the test controls, one task.

    python -m tests.gpu_worker.gate_worker BROKER_URL PREFIX QUEUE

The probe reads `<PREFIX>gate:problem` from Redis at every beat: empty, the GPU answers; set, it
reports that problem, as `device_info.live_state` does when NVML loses the slice. The task `gate.work`
appends `start:<tag>:<pid>` and `done:<tag>` to `<PREFIX>gate:log`, sleeping between them.
"""

from __future__ import annotations

import os
import sys
import time

import redis
from celery import Celery

from gpu_worker import protocol
from gpu_worker.worker import heartbeat

BROKER, PREFIX, QUEUE = sys.argv[1:4] if __name__ == "__main__" else ("redis://", "", "gate")
app = Celery("gate", broker=BROKER)
app.conf.update(
    broker_transport_options={"global_keyprefix": PREFIX},
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
)
client = redis.Redis.from_url(BROKER)


@app.task(name="gate.work")
def work(tag: str, seconds: float) -> None:
    client.rpush(f"{PREFIX}gate:log", f"start:{tag}:{os.getpid()}")
    time.sleep(seconds)
    client.rpush(f"{PREFIX}gate:log", f"done:{tag}")


def probe() -> dict:
    problem = client.get(f"{PREFIX}gate:problem")
    return {"nvml": True, **({"problem": problem.decode()} if problem else {})}


if __name__ == "__main__":
    heart = heartbeat.Heart(
        client, prefix=PREFIX, name="gate@test", queue=QUEUE, pool="test", backend="cuda", interval=0.3
    )
    heart.probe = probe
    heart.set(protocol.WorkerStatus(state=protocol.SERVING, device="a test GPU", healthy=True))
    app.steps["worker"].add(heartbeat.bootstep(heart))
    app.worker_main(["worker", "-Q", QUEUE, "-P", "prefork", "-c", "1", "-n", "gate@test", "--without-gossip",
                     "--without-mingle", "--loglevel", "INFO"])  # fmt: skip
