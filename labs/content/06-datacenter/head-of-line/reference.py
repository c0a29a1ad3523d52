"""Shortest job first with backfilling: any waiting job that fits may start, the shortest first."""


def choose(queue, free_gpus, now):
    waiting = sorted((job for job in queue if not job.running), key=lambda job: job.duration)
    return [job.id for job in waiting]
