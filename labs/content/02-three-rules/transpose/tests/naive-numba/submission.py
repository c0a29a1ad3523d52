from numba import cuda

TILE = 32  # each block transposes one 32 x 32 tile
ROWS = 8  # with 32 x 8 threads, each thread moves TILE // ROWS = 4 elements


@cuda.jit
def transpose(a, out):
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        out[x, y + j] = a[y + j, x]  # TODO: the read is coalesced, this write is not: stage the tile in shared memory
