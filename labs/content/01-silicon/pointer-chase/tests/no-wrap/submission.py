from numba import cuda


@cuda.jit
def chase(nxt, out, steps):
    t = cuda.threadIdx.x
    j = t
    for _ in range(steps):
        j = nxt[j] + 32  # forgot & (n - 1): after n / 32 steps j is past the array
    out[t] = j
