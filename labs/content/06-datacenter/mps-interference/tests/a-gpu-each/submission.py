def choose(queue, free_gpus, now):
    # Bare ids only: every job gets an empty GPU of its own, in arrival order, as if MPS were off.
    return [job.id for job in queue]
