from numba import cuda, float32

TILE = 32
ROWS = 8


@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):
        tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx  # the output tile of block (bx, by) is tile (by, bx)
    y = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[tx, ty + j]
