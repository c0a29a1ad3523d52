import math

from numba import cuda


@cuda.jit(device=True)
def gelu(v):
    return 0.5 * v * (1.0 + math.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))


@cuda.jit
def tp_mlp(x, a, b, z, partial, y):
    r = cuda.threadIdx.y  # this thread's rank: P ranks are the P rows of threads of the block
    P = cuda.blockDim.y
    t, step = cuda.threadIdx.x, cuda.blockDim.x
    row = cuda.blockIdx.x  # one token per block
    h = x.shape[1]
    fp = z.shape[2]  # MLP columns per rank
    # column-parallel A: rank r owns columns [r fp, (r + 1) fp); GeLU is elementwise, so no communication
    for u in range(t, fp, step):
        acc = 0.0
        for k in range(h):
            acc += x[row, k] * a[k, r * fp + u]
        z[r, row, u] = gelu(acc)
    cuda.syncthreads()
    # row-parallel B: rank r owns rows [r fp, (r + 1) fp); its product is one term of the sum over ranks
    for j in range(t, h, step):
        acc = 0.0
        for u in range(fp):
            acc += z[r, row, u] * b[r * fp + u, j]
        partial[r, row, j] = acc
    # TODO: y[r] must be the full output on every rank, the sum over all ranks of their partial products.
    # Place the collective Megatron needs here (a barrier, then the sum), and nowhere else.
    for j in range(t, h, step):
        y[r, row, j] = partial[r, row, j]
