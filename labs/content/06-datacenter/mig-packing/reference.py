"""Backfill with explicit best-fit placement: every waiting job that has room starts, in arrival order."""

PROFILES = {  # compute slices -> (memory slices taken, where it may start)
    1: (1, (0, 1, 2, 3, 4, 5, 6)),
    2: (2, (0, 2, 4)),
    3: (4, (0, 4)),
    4: (4, (0,)),
    7: (8, (0,)),
}
GPUS = 4


def layout(queue):
    """Which memory slices of each GPU the running jobs hold."""
    taken = [[False] * 8 for _ in range(GPUS)]
    for job in queue:
        if job.running:
            gpu, start = job.placement
            width = PROFILES[job.gpus][0]
            taken[gpu][start : start + width] = [True] * width
    return taken


def choose(queue, free_gpus, now):
    taken = layout(queue)
    chosen = [job.id for job in queue if job.running]
    for job in queue:
        if job.running:
            continue
        width, starts = PROFILES[job.gpus]
        best = None  # the fullest GPU with room, at the highest start: small instances fill a GPU from its end
        for gpu, slots in enumerate(taken):
            start = next((s for s in reversed(starts) if not any(slots[s : s + width])), None)
            if start is not None and (best is None or slots.count(False) < taken[best[0]].count(False)):
                best = (gpu, start)
        if best is not None:
            gpu, start = best
            taken[gpu][start : start + width] = [True] * width
            chosen.append((job.id, gpu, start))
    return chosen
