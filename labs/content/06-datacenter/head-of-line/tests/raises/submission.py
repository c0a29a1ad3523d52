def choose(queue, free_gpus, now):
    biggest = max(job.gpus for job in queue if not job.running)  # empty once every job runs
    return [job.id for job in queue if job.gpus <= biggest]
