"""Discretised least-attained service with four queues (three thresholds) where Tiresias has three."""

THRESHOLDS = (25, 250, 2500)  # GPU-minutes of attained service at which a job drops to a lower queue


def choose(queue, free_gpus, now):
    def priority(job):
        level = sum(job.attained >= t for t in THRESHOLDS)
        return (level, job.submitted)

    return [job.id for job in sorted(queue, key=priority)]
