from numba import cuda, float32

THREADS = 256


@cuda.jit
def block_sum(x, out):
    sdata = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = THREADS // 2
    while s > 0:
        if tid >= THREADS - s:  # the last s threads work, reading the s words below theirs
            sdata[tid] += sdata[tid - s]
        cuda.syncthreads()
        s //= 2
    if tid == THREADS - 1:
        out[cuda.blockIdx.x] = sdata[THREADS - 1]
