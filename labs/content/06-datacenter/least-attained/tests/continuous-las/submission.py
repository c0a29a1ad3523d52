def choose(queue, free_gpus, now):
    # least attained service, not discretised: the two jobs with the least service swap back and forth
    return [job.id for job in sorted(queue, key=lambda job: (job.attained, job.submitted))]
