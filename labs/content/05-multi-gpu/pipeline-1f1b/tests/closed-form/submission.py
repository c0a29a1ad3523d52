from numba import cuda


@cuda.jit
def one_f_one_b(fwd, bwd, inflight):
    # 1F1B written down, not simulated. Stage s's first p - 1 - s micro-batches go forward in consecutive
    # slots as they arrive from stage s - 1; after the warm-up it alternates, one forward and one backward,
    # so its forwards come every other slot. Each backward leaves the last stage 2 slots after the previous
    # one and moves one stage back per slot.
    s = cuda.threadIdx.x
    p, m = fwd.shape
    for j in range(m):
        if j <= p - 1 - s:
            fwd[s, j] = s + j
        else:
            fwd[s, j] = 2 * j + s
        bwd[s, j] = 2 * p - 1 - s + 2 * j
    inflight[s] = min(p - s, m)
