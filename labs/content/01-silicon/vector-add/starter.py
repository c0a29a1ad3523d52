from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    # TODO: guard the last block, then compute c[i] from a[i] and b[i].
    pass
