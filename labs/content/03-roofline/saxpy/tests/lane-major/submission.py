from numba import cuda


@cuda.jit
def saxpy(x, y, out, alpha):
    t = cuda.grid(1)
    n = x.size
    i = (t % 32) * (n // 32) + t // 32  # every element once, but neighbouring lanes n / 32 elements apart
    if t < n:
        out[i] = alpha * x[i] + y[i]
