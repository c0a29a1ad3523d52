from numba import cuda


@cuda.jit
def copy2d(a, out):
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for row in range(y0, a.shape[0], sy):  # a 2D grid-stride loop: any grid covers the matrix
        for col in range(x0, a.shape[1], sx):  # x still picks the column: 32 consecutive floats per warp
            out[row, col] = a[row, col]
