from numba import cuda


@cuda.jit
def saxpy(x, y, out, alpha):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, x.size, step):
        out[i] = alpha * x[i] + y[i]
