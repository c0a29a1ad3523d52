from numba import cuda


@cuda.jit
def scale(x, out):
    i = cuda.grid(1)
    # TODO: the grid has fewer threads than x has elements: loop, stepping by cuda.gridsize(1).
    if i < x.size:
        out[i] = 2 * x[i] + 1
