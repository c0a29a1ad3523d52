"""Packs by compute slices, as if a GPU were 7 interchangeable slices: it is not."""

GPUS = 4


def choose(queue, free_gpus, now):
    used = [0] * GPUS  # compute slices in use per GPU, ignoring where each instance sits
    for job in queue:
        if job.running:
            used[job.placement[0]] += job.gpus
    chosen = [job.id for job in queue if job.running]
    for job in queue:
        if job.running:
            continue
        for gpu in range(GPUS):
            if used[gpu] + job.gpus <= 7:
                chosen.append((job.id, gpu, used[gpu]))  # the next free compute slice: not a place MIG allows
                used[gpu] += job.gpus
                break
    return chosen
