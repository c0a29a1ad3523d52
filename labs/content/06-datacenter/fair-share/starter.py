"""Tiresias-style discretised two-dimensional least-attained-service (Gu et al., NSDI 2019)."""

THRESHOLDS = (50, 500)  # GPU-minutes of attained service at which a job drops to a lower queue


def choose(queue, free_gpus, now):
    def priority(job):
        level = sum(job.attained >= t for t in THRESHOLDS)
        return (level, job.submitted)  # FIFO within a queue: jobs of one level do not preempt each other

    return [job.id for job in sorted(queue, key=priority)]
