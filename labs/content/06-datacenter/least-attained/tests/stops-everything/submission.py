def choose(queue, free_gpus, now):
    return []
