import math

from numba import cuda


@cuda.jit(device=True)
def gelu(v):
    return 0.5 * v * (1.0 + math.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))


@cuda.jit
def tp_mlp(x, a, b, z, partial, y):
    r = cuda.threadIdx.y
    P = cuda.blockDim.y
    t, step = cuda.threadIdx.x, cuda.blockDim.x
    row = cuda.blockIdx.x
    h = x.shape[1]
    fp = z.shape[2]
    hp = h // P
    # wrong split: A by rows. Rank r sums only over its h / P rows of A, then applies GeLU to that partial sum.
    for u in range(t, fp, step):
        acc = 0.0
        for k in range(r * hp, (r + 1) * hp):
            acc += x[row, k] * a[k, r * fp + u]
        z[r, row, u] = gelu(acc)
    cuda.syncthreads()
    for j in range(t, h, step):
        acc = 0.0
        for u in range(fp):
            acc += z[r, row, u] * b[r * fp + u, j]
        partial[r, row, j] = acc
    cuda.syncthreads()
    for j in range(t, h, step):
        acc = 0.0
        for q in range(P):
            acc += partial[q, row, j]
        y[r, row, j] = acc
