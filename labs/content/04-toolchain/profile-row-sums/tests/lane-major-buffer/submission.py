from numba import cuda, float32

WARPS = 4


@cuda.jit
def row_sums(x, out):
    buf = cuda.shared.array((32, WARPS), float32)  # [lane][warp]: a warp's 32 partial sums are 4 words apart
    tid = cuda.threadIdx.x
    lane, w = tid % 32, tid // 32
    row = cuda.grid(1) // 32
    rows, cols = x.shape
    acc = float32(0.0)
    if row < rows:
        for j in range(lane, cols, 32):
            acc += x[row, j]
    buf[lane, w] = acc
    cuda.syncthreads()
    s = 16
    while s > 0:
        if lane < s:
            buf[lane, w] += buf[lane + s, w]  # lanes 4 words apart: 8 banks for 32 lanes, 4-way conflicts
        cuda.syncthreads()
        s //= 2
    if lane == 0 and row < rows:
        out[row] = buf[0, w]
