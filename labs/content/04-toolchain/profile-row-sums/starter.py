from numba import cuda


@cuda.jit
def row_sums(x, out):
    # One thread per row: simple and correct. The launch gives a warp per row; this uses one thread of it.
    r = cuda.grid(1)
    if r < x.shape[0]:
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[r, j]
        out[r] = acc
