from numba import cuda


@cuda.jit
def saxpy(x, y, out, alpha):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = alpha * x[i] - y[i]
