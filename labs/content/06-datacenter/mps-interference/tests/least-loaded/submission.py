"""Spread the jobs: each goes to the GPU with the fewest jobs on it, up to four."""

GPUS = 8


def choose(queue, free_gpus, now):
    clients = [0] * GPUS
    for job in queue:
        if job.running:
            clients[job.placement[0]] += 1
    chosen = [job.id for job in queue if job.running]
    for job in queue:
        if job.running:
            continue
        gpu = min(range(GPUS), key=lambda g: clients[g])
        if clients[gpu] < 4:
            clients[gpu] += 1
            chosen.append((job.id, gpu))
    return chosen
