from numba import cuda

THREADS = 256


@cuda.jit
def reverse_blocks(a, out):
    # No tile and so no barrier: thread t reads element 255 - t of its block's slice itself. A warp's 32 reads
    # are still 32 consecutive floats (in the opposite order), so they coalesce just as well.
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * THREADS
    out[base + t] = a[base + THREADS - 1 - t]
