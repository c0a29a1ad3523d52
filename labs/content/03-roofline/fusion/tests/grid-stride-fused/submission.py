from numba import cuda


@cuda.jit
def fused(x, y, tmp, out):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, x.size, step):
        t = 2 * x[i] + y[i]  # tmp is never touched
        out[i] = t if t > 0.0 else 0.0
