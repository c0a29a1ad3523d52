"""Gang scheduling with backfill: arrival order, any job that fits starts. It never preempts."""


def choose(queue, free_gpus, now):
    # Here job.duration is None: you are not told how long a job will run.
    # Preemption is on: a running job you leave out of the answer is stopped (it keeps its
    # progress and pays one minute reloading its checkpoint when it resumes).
    # job.attained is the GPU-minutes it has had so far (GPUs x minutes run).
    return [job.id for job in queue]  # TODO: which jobs deserve the GPUs first?
