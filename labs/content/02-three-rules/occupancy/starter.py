from numba import cuda

PER_THREAD = 16  # each block handles 16 * 256 = 4096 consecutive elements
BLOCK = 256


@cuda.jit
def scale(x, out):
    base = cuda.blockIdx.x * PER_THREAD * BLOCK + cuda.threadIdx.x
    # Correct, and coalesced, but each store waits for its load: one load in flight per thread.
    # TODO: issue all PER_THREAD loads first (into a cuda.local.array), then compute and store.
    for j in range(PER_THREAD):
        i = base + j * BLOCK
        out[i] = 2 * x[i] + 1
