def choose(queue, free_gpus, now)
    return [job.id for job in queue]
