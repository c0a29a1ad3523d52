"""FIFO with backfilling: the queue keeps its order, but a job behind one that does not fit may start."""


def choose(queue, free_gpus, now):
    return [job.id for job in queue]  # oldest first; the simulator starts each one that fits
