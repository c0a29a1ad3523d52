"""Share a GPU only where the jobs on it still fit its SMs and its bandwidth, and there where they fit best."""

GPUS = 8
CLIENTS = 4
LIMIT = 1.2  # how far past a whole GPU the SM or bandwidth sum may go: 1 / 1.2 of full speed at worst


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
        best = None  # (the slowdown on that GPU once this job is there, the GPU)
        for gpu in range(GPUS):
            after = max(1.0, sm[gpu] + job.sm, bw[gpu] + job.bw)
            if clients[gpu] < CLIENTS and after <= LIMIT and (best is None or after < best[0]):
                best = (after, gpu)
        if best is not None:
            gpu = best[1]
            sm[gpu], bw[gpu], clients[gpu] = sm[gpu] + job.sm, bw[gpu] + job.bw, clients[gpu] + 1
            chosen.append((job.id, gpu))
    return chosen
