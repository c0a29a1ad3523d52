from numba import cuda

THREADS = 256


@cuda.jit
def copy4(a, out):
    base = cuda.blockIdx.x * 4 * THREADS + cuda.threadIdx.x
    for k in range(4):  # a warp: 32 consecutive elements each time
        i = base + k * THREADS
        if i < a.size:
            out[i] = a[i]
