from numba import cuda, float32

BM = 64  # the block's tile of C is BM x BM; 16 x 16 threads, so 16 outputs per thread
TM = 4


@cuda.jit
def matmul(a, b, c):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BM
    # Step 0, naive and correct: each of the thread's 16 outputs is its own dot product read from global memory.
    # Step 1: stage 64 x 16 slices of A and 16 x 64 of B in shared memory (cuda.shared.array, syncthreads).
    # Step 2: keep the thread's 4 x 4 outputs in registers (cuda.local.array((4, 4), float32)) and, per k,
    # load 4 values of A and 4 of B from shared memory into registers for 16 FMAs.
    for i in range(TM):
        for j in range(TM):
            row, col = row0 + ty + 16 * i, col0 + tx + 16 * j
            acc = float32(0.0)
            for k in range(a.shape[1]):
                acc += a[row, k] * b[k, col]
            c[row, col] = acc
