from numba import cuda


@cuda.jit
def stencil(x, out):
    i = cuda.grid(1)
    n = x.size
    if i == 0 or i == n - 1:
        out[i] = x[i]
    elif i < n:
        out[i] = (x[i - 1] + x[i] + x[i + 1]) / 3  # TODO: each x element is loaded by three threads
