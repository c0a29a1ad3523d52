from numba import cuda, float32

TILE = 16


@cuda.jit
def matmul(a, b, c):
    # Step 1 of the worked session: 16 x 16 shared-memory tiles, one output per thread at a time. The block
    # walks its 64 x 64 tile of C as 16 sub-tiles, so A and B are read n / 16 times, and every FMA costs two
    # shared loads.
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for sub in range(16):
        row = cuda.blockIdx.y * 64 + (sub // 4) * TILE + ty
        col = cuda.blockIdx.x * 64 + (sub % 4) * TILE + tx
        acc = float32(0.0)
        for t in range(a.shape[1] // TILE):
            sa[ty, tx] = a[row, t * TILE + tx]
            sb[ty, tx] = b[t * TILE + ty, col]
            cuda.syncthreads()
            for k in range(TILE):
                acc += sa[ty, k] * sb[k, tx]
            cuda.syncthreads()
        c[row, col] = acc
