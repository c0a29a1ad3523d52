from numba import cuda, float32

PER_THREAD = 16  # each block sums 16 * 256 = 4096 consecutive products
BLOCK = 256


@cuda.jit
def dot16(x, y, out):
    # x and y hold float16; out[b] is the sum of x[i] * y[i] over block b's 4096 elements.
    partial = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * PER_THREAD * BLOCK + t
    acc = float32(0.0)
    for j in range(PER_THREAD):  # 32 independent 2-byte loads; a warp reads 64 consecutive bytes per load
        i = base + j * BLOCK
        acc += float32(x[i]) * float32(y[i])  # exact product of two halves, float32 sum
    partial[t] = acc
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:  # sequential addressing: no bank conflicts
        if t < s:
            partial[t] += partial[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]
