"""Strict FIFO on a cluster of H100s in MIG mode: the oldest waiting job first, and nothing passes it."""

# Each job asks for ONE MIG instance of `job.gpus` compute slices: 1, 2, 3, 4 or 7 (1g ... 7g).
# A GPU has 8 memory slices, numbered 0 to 7; each profile takes a run of them and may start only at:
PROFILES = {  # compute slices -> (memory slices taken, where it may start)
    1: (1, (0, 1, 2, 3, 4, 5, 6)),
    2: (2, (0, 2, 4)),
    3: (4, (0, 4)),
    4: (4, (0,)),
    7: (8, (0,)),
}
GPUS = 4


def choose(queue, free_gpus, now):
    # queue: every job that has arrived and not finished, oldest first. Each has .id, .gpus (compute
    #   slices), .submitted, .running, .attained, .executed and, while it runs, .placement = (gpu, start).
    # free_gpus: free compute slices on all GPUs together. They may be spread so that no instance fits.
    # Return job ids, most important first. A bare id is placed by first fit (lowest GPU, lowest start);
    # (id, gpu, start) places it yourself. Jobs that cannot be placed wait; running jobs keep their place.
    chosen = [job.id for job in queue if job.running]
    for job in queue:
        if job.running:
            continue
        if job.gpus > free_gpus:
            break  # strict FIFO: the head waits, and so does everyone behind it
        chosen.append(job.id)
        free_gpus -= job.gpus
    return chosen
