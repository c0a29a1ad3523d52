def choose(queue, free_gpus, now):
    # Least attained GPU-time first; among jobs served alike, the smaller job first (it frees its GPUs soonest
    # for the same service), then the older one.
    return [job.id for job in sorted(queue, key=lambda job: (job.attained, job.gpus, job.submitted))]
