"""MPS switched on and nothing else: every job goes to the first GPU with a free client place."""

GPUS = 8
CLIENTS = 4  # jobs one GPU takes at once


def choose(queue, free_gpus, now):
    # queue: every job that has arrived and not finished, oldest first. Each has .id, .submitted, .running,
    #   .sm and .bw (the shares of the SMs and of the memory bandwidth it uses alone, from a profile) and,
    #   while it runs, .placement = (gpu, 0). Durations are hidden.
    # free_gpus: GPUs with no job at all.
    # Return job ids, most important first: (id, gpu) puts a job beside that GPU's others; a bare id gets
    # an empty GPU of its own. Jobs on one GPU each run at 1 / max(1, sum of .sm, sum of .bw) of their speed.
    clients = [0] * GPUS
    for job in queue:
        if job.running:
            clients[job.placement[0]] += 1
    chosen = [job.id for job in queue if job.running]
    for job in queue:
        if job.running:
            continue
        gpu = next((g for g in range(GPUS) if clients[g] < CLIENTS), None)
        if gpu is None:
            break
        clients[gpu] += 1
        chosen.append((job.id, gpu))
    return chosen
