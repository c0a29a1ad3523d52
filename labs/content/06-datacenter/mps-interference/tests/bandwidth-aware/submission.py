"""Share a GPU only where the SM and bandwidth sums stay within a whole GPU, on the first GPU that has room."""

GPUS = 8
CLIENTS = 4


def choose(queue, free_gpus, now):
    sm, bw, clients = [0.0] * GPUS, [0.0] * GPUS, [0] * GPUS
    for job in queue:
        if job.running:
            gpu = job.placement[0]
            sm[gpu], bw[gpu], clients[gpu] = sm[gpu] + job.sm, bw[gpu] + job.bw, clients[gpu] + 1
    chosen = [job.id for job in queue if job.running]
    for job in queue:
        if job.running:
            continue
        for gpu in range(GPUS):
            if clients[gpu] < CLIENTS and (clients[gpu] == 0 or max(sm[gpu] + job.sm, bw[gpu] + job.bw) <= 1.0):
                sm[gpu], bw[gpu], clients[gpu] = sm[gpu] + job.sm, bw[gpu] + job.bw, clients[gpu] + 1
                chosen.append((job.id, gpu))
                break
    return chosen
