from numba import cuda, float32

THREADS = 128


@cuda.jit
def row_sums(x, out):
    buf = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    lane = tid % 32
    base = tid - lane  # this warp's 32 slots of buf
    row = cuda.grid(1) // 32  # a warp per row
    rows, cols = x.shape
    acc = float32(0.0)
    if row < rows:
        for j in range(lane, cols, 32):  # a warp asks for 32 consecutive floats of its row: 4 sectors
            acc += x[row, j]
    buf[tid] = acc
    cuda.syncthreads()
    s = 16
    while s > 0:  # sequential addressing: lanes read neighbouring words, one per bank
        if lane < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if lane == 0 and row < rows:
        out[row] = buf[base]
