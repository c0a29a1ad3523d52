from numba import cuda


@cuda.jit
def recursive_doubling(x, out):
    r = cuda.threadIdx.y  # this thread's rank: P ranks are the P rows of threads of the block
    P = cuda.blockDim.y
    c = x.shape[1]
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x  # the offset this thread adds, on every rank
    if i < c:
        out[r, i] = x[r, i]
    cuda.syncthreads()
    d = 1  # 2^s at step s
    while d < P:
        partner = r  # TODO: the rank this one swaps with at this step
        v = out[partner, i] if i < c else 0.0  # receive the partner's whole buffer...
        cuda.syncthreads()  # ...before anyone adds into theirs
        if i < c:
            out[r, i] += v
        cuda.syncthreads()  # the end of the step
        d *= 2
