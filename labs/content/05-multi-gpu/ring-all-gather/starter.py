from numba import cuda


@cuda.jit
def ring_all_gather(part, out):
    r = cuda.threadIdx.y  # this thread's rank: P ranks are the P rows of threads of the block
    P = cuda.blockDim.y
    c = part.shape[1]  # floats per chunk; out[r, k * c : (k + 1) * c] is rank r's copy of chunk k
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x  # the offset inside a chunk this thread moves
    if i < c:
        out[r, r * c + i] = part[r, i]  # rank r starts with chunk r only
    cuda.syncthreads()
    left = (r - 1 + P) % P  # the rank that sends to this one
    for s in range(P - 1):
        # TODO: which chunk k does rank `left` hold and pass on at step s? Copy it into this rank's chunk k.
        k = 0
        if i < c:
            out[r, k * c + i] = out[left, k * c + i]
        cuda.syncthreads()  # the end of a ring step
