from numba import cuda


@cuda.jit
def ring_reduce_scatter(x, buf, out):
    r = cuda.threadIdx.y  # this thread's rank
    P = cuda.blockDim.y
    c = out.shape[1]
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x  # offset inside every chunk
    if i < c:
        for k in range(P):
            buf[r, k * c + i] = x[r, k * c + i]
    cuda.syncthreads()
    left = (r - 1 + P) % P
    for s in range(P - 1):
        # at step s rank r-1 sends chunk (r - 2 - s) mod P, which it has summed over s + 1 ranks
        k = (r - 2 - s + 2 * P) % P
        if i < c:
            buf[r, k * c + i] += buf[left, k * c + i]
        cuda.syncthreads()  # the end of a ring step: every rank's send has arrived
    if i < c:
        out[r, i] = buf[r, r * c + i]
