from numba import cuda, float32

FULL = 0xFFFFFFFF


@cuda.jit
def row_sums(x, out):
    lane = cuda.threadIdx.x % 32
    row = cuda.grid(1) // 32  # a warp per row
    rows, cols = x.shape
    acc = float32(0.0)
    if row < rows:
        for j in range(lane, cols, 32):  # a warp asks for 32 consecutive floats of its row: 4 sectors
            acc += x[row, j]
    # The warp's 32 partial sums added in registers, no shared memory: each step a lane adds the sum held
    # `s` lanes above it, and after five steps lane 0 holds the row's. Every lane takes part, a row or none.
    s = 16
    while s > 0:
        acc += cuda.shfl_down_sync(FULL, acc, s)
        s //= 2
    if lane == 0 and row < rows:
        out[row] = acc
