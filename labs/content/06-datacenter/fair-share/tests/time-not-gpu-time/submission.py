def choose(queue, free_gpus, now):
    # least attained *time*: a 16-GPU job is charged as much as a 1-GPU job for a minute of running
    return [job.id for job in sorted(queue, key=lambda job: (job.executed, job.submitted))]
