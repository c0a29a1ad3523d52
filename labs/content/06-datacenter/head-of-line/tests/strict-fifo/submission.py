"""Strict FIFO: the job at the head of the queue starts first, and nothing may pass it."""


def choose(queue, free_gpus, now):
    # queue: every job that has arrived and not finished, oldest first. Each job has
    #   .id, .gpus, .submitted (minute), .duration (minutes it will run), .running (bool),
    #   .attained (GPU-minutes served so far), .executed, .resumed, .last_ran, .preemptions
    # free_gpus: GPUs no running job holds; now: the time in minutes.
    # Return the ids of the jobs that should run, most important first: each one that fits starts.
    chosen = [job.id for job in queue if job.running]  # running jobs keep their GPUs anyway
    for job in queue:
        if job.running:
            continue
        if job.gpus > free_gpus:
            break  # TODO: the head does not fit, so every job behind it waits too. Must it?
        chosen.append(job.id)
        free_gpus -= job.gpus
    return chosen
