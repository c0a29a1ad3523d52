from numba import cuda


@cuda.jit
def one_f_one_b(fwd, bwd, inflight):
    s = cuda.threadIdx.x  # this thread's stage
    p, m = fwd.shape
    for j in range(m):
        fwd[s, j] = -1  # -1: not run yet
        bwd[s, j] = -1
    cuda.syncthreads()
    warmup = p - 1 - s  # wrong: with fewer micro-batches than stages, there are only m forwards to warm up with
    nf = 0  # forwards this stage has run
    nb = 0  # backwards this stage has run
    held = 0
    peak = 0
    for t in range(2 * (m + p - 1)):
        # 1F1B order: the warm-up forwards, then one forward and one backward in turn, then the last backwards
        forward = nf < warmup or (nf < m and nb == nf - warmup)
        ready = False
        if forward:
            ready = s == 0 or (fwd[s - 1, nf] >= 0 and fwd[s - 1, nf] < t)
        elif nb < m:
            if s == p - 1:
                ready = fwd[s, nb] < t
            else:
                ready = bwd[s + 1, nb] >= 0 and bwd[s + 1, nb] < t
        cuda.syncthreads()  # everyone has read slot t - 1's state before anyone writes slot t's
        if ready:
            if forward:
                fwd[s, nf] = t
                nf += 1
                held += 1
                peak = max(peak, held)
            else:
                bwd[s, nb] = t
                nb += 1
                held -= 1
        cuda.syncthreads()  # the end of the slot
    inflight[s] = peak
