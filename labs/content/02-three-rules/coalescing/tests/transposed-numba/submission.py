from numba import cuda


@cuda.jit
def copy2d(a, out):
    col, row = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        out[col, row] = a[row, col]  # swapped the wrong pair of indices: this is a transpose
