from numba import cuda, float32
from numba.types import float16

PER_THREAD = 16
BLOCK = 256


@cuda.jit
def dot16(x, y, out):
    # Every partial sum rounded to float16 (11 significant bits), as a float16 accumulator would be: once it
    # passes 16 its spacing is 2^-6, and the small products added to it are rounded away.
    partial = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * PER_THREAD * BLOCK + t
    acc = float32(0.0)
    for j in range(PER_THREAD):
        i = base + j * BLOCK
        acc = float32(float16(acc + float32(x[i]) * float32(y[i])))
    partial[t] = acc
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if t < s:
            partial[t] = float32(float16(partial[t] + partial[t + s]))
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]
