from numba import cuda, float32

PER_THREAD = 16  # each block handles 16 * 256 = 4096 consecutive elements
BLOCK = 256


@cuda.jit
def scale(x, out):
    base = cuda.blockIdx.x * PER_THREAD * BLOCK + cuda.threadIdx.x
    v = cuda.local.array(PER_THREAD, float32)  # 16 registers once the loops are unrolled
    for j in range(PER_THREAD):  # 16 independent loads issued back to back: 16 in flight per thread
        v[j] = x[base + j * BLOCK]  # a warp reads 32 consecutive floats: coalesced
    for j in range(PER_THREAD):
        out[base + j * BLOCK] = 2 * v[j] + 1
