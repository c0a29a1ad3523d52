from numba import cuda


@cuda.jit
def scale(x, out):
    start, step = cuda.grid(1), cuda.gridsize(1)
    n = x.size
    for i in range(start, n, 2 * step):  # two independent elements per pass: two loads in flight
        j = i + step
        a = x[i]
        b = x[j] if j < n else 0.0
        out[i] = 2 * a + 1
        if j < n:
            out[j] = 2 * b + 1
