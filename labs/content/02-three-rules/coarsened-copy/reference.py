from numba import cuda

THREADS = 256


@cuda.jit
def copy4(a, out):
    base = cuda.blockIdx.x * 4 * THREADS + cuda.threadIdx.x
    n = a.size
    i0, i1, i2, i3 = base, base + THREADS, base + 2 * THREADS, base + 3 * THREADS  # a warp: 32 consecutive each
    # four independent loads before any store: four requests in flight per thread
    v0 = a[i0] if i0 < n else 0.0
    v1 = a[i1] if i1 < n else 0.0
    v2 = a[i2] if i2 < n else 0.0
    v3 = a[i3] if i3 < n else 0.0
    if i0 < n:
        out[i0] = v0
    if i1 < n:
        out[i1] = v1
    if i2 < n:
        out[i2] = v2
    if i3 < n:
        out[i3] = v3
