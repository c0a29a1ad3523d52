from numba import cuda, float32

TILE = 16


@cuda.jit
def matmul(a, b, c):
    col, row = cuda.grid(2)
    acc = float32(0.0)
    for k in range(a.shape[1]):  # TODO: every A and B element is fetched from memory by n threads: tile it
        acc += a[row, k] * b[k, col]
    c[row, col] = acc
