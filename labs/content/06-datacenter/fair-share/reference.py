"""Two-dimensional least attained service, not discretised: the least GPU-time served goes first."""


def choose(queue, free_gpus, now):
    return [job.id for job in sorted(queue, key=lambda job: (job.attained, job.submitted))]
