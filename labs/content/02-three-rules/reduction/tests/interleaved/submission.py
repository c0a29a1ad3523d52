from numba import cuda, float32

THREADS = 256


@cuda.jit
def block_sum(x, out):
    sdata = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = 1
    while s < THREADS:
        index = 2 * s * tid  # TODO: neighbouring threads touch words 2s apart: bank conflicts
        if index < THREADS:
            sdata[index] += sdata[index + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]
