def choose(queue, free_gpus, now):
    # Round robin: whoever last held GPUs longest ago goes first (Gandiva-like turns, every quantum)
    def turn(job):
        return (job.last_ran if job.last_ran is not None else job.submitted, job.submitted)

    return [job.id for job in sorted(queue, key=turn)]
