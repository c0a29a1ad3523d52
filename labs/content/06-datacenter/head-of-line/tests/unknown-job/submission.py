def choose(queue, free_gpus, now):
    return [job.id + 1000 for job in queue]  # ids of jobs that are not in the queue
