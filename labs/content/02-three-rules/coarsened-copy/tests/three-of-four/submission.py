from numba import cuda

THREADS = 256


@cuda.jit
def copy4(a, out):
    base = cuda.blockIdx.x * 4 * THREADS + cuda.threadIdx.x
    for k in range(3):  # one element in four is never copied
        i = base + k * THREADS
        if i < a.size:
            out[i] = a[i]
