from numba import cuda, float32

BM = 64  # the block's tile of C is BM x BM
BK = 16  # the k-slice staged per step
TM = 4  # each thread computes TM x TM outputs: rows ty + 16 i, columns tx + 16 j


@cuda.jit
def matmul(a, b, c):
    sa = cuda.shared.array((BM, BK), float32)  # 64 rows of A, 16 columns
    sb = cuda.shared.array((BK, BM), float32)  # 16 rows of B, 64 columns
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 16 + tx
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BM
    acc = cuda.local.array((TM, TM), float32)  # registers: every index is a constant once unrolled
    ar = cuda.local.array(TM, float32)
    br = cuda.local.array(TM, float32)
    for i in range(TM):
        for j in range(TM):
            acc[i, j] = 0
    for k0 in range(0, a.shape[1], BK):
        for step in range(4):  # 1024 elements of each tile, 4 per thread, coalesced
            e = tid + 256 * step
            sa[e // BK, e % BK] = a[row0 + e // BK, k0 + e % BK]
            sb[e // BM, e % BM] = b[k0 + e // BM, col0 + e % BM]
        cuda.syncthreads()
        for k in range(BK):
            for i in range(TM):  # the fragments: 8 shared loads feed 16 FMAs
                ar[i] = sa[ty + 16 * i, k]  # 2 addresses per warp: broadcast
            for j in range(TM):
                br[j] = sb[k, tx + 16 * j]  # 16 consecutive words: no conflict
            for i in range(TM):
                for j in range(TM):
                    acc[i, j] += ar[i] * br[j]
        cuda.syncthreads()  # before the next slice overwrites the tiles
    for i in range(TM):
        for j in range(TM):
            c[row0 + ty + 16 * i, col0 + tx + 16 * j] = acc[i, j]
