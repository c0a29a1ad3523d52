from numba import cuda, float32

TILE = 16
PADDED = 17  # TILE + 1: a shared array's shape must be a constant


@cuda.jit
def matmul(a, b, c):
    sa = cuda.shared.array((TILE, PADDED), float32)  # padded "to avoid conflicts" where there were none
    sb = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = float32(0.0)
    for t in range(a.shape[1] // TILE):
        sa[ty, tx] = a[row, t * TILE + tx]  # coalesced: tx walks along a row of A and of B
        sb[ty, tx] = b[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):  # each element loaded above is used TILE times
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()  # before the next tiles overwrite these
    c[row, col] = acc
