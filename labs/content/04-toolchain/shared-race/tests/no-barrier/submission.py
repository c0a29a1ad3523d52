from numba import cuda, float32

THREADS = 256


@cuda.jit
def reverse_blocks(a, out):
    tile = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * THREADS
    tile[t] = a[base + t]
    # a missing cuda.syncthreads(): thread t reads what thread THREADS - 1 - t may not have written yet
    out[base + t] = tile[THREADS - 1 - t]
