from numba import cuda


@cuda.jit
def ring_reduce_scatter(x, buf, out):
    r = cuda.threadIdx.y  # this thread's rank: P ranks are the P rows of threads of the block
    P = cuda.blockDim.y
    c = out.shape[1]  # floats per chunk; each rank holds P chunks, buf[r, k * c : (k + 1) * c] is chunk k
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x  # the offset inside a chunk this thread moves
    if i < c:
        for k in range(P):
            buf[r, k * c + i] = x[r, k * c + i]  # each rank starts from its own data
    cuda.syncthreads()
    left = (r - 1 + P) % P  # the rank that sends to this one
    for s in range(P - 1):
        # TODO: which chunk k arrives from `left` at step s? Add it into this rank's chunk k, so that
        # after P - 1 steps chunk r of rank r holds the sum over all ranks.
        k = 0
        if i < c:
            buf[r, k * c + i] += buf[left, k * c + i]
        cuda.syncthreads()  # the end of a ring step
    if i < c:
        out[r, i] = buf[r, r * c + i]
