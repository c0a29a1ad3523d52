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
        if tid < s:  # the first s threads work: whole warps, neighbouring words, no bank conflicts
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]
