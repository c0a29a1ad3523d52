def choose(queue, free_gpus, now):
    # GPUs counted from 1, as people count: the eighth GPU is number 7
    return [job.id if job.running else (job.id, 1 + job.id % 8) for job in queue]
