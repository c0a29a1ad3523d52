def choose(queue, free_gpus, now):
    busy = [0, 0, 0, 0]
    for job in queue:
        gpu, start = job.placement  # only a running job has one: a waiting job's is None
        busy[gpu] += job.gpus
    return [job.id for job in sorted(queue, key=lambda job: job.gpus)]
