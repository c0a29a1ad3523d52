from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size - 1:
        c[i] = a[i] + b[i]
