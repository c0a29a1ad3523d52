#define BM 64  // the block's tile of C is BM x BM; 16 x 16 threads, so 16 outputs per thread
#define TM 4

extern "C" __global__ void matmul(const float* a, const float* b, float* c, int n)
{
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BM;
    // Step 0, naive and correct: each of the thread's 16 outputs is its own dot product read from global memory.
    // Step 1: stage 64 x 16 slices of A and 16 x 64 of B in __shared__ arrays (with __syncthreads()).
    // Step 2: keep the thread's 4 x 4 outputs in registers (float acc[4][4], #pragma unroll) and, per k,
    // load 4 values of A and 4 of B from shared memory into registers for 16 FMAs.
    for (int i = 0; i < TM; ++i) {
        for (int j = 0; j < TM; ++j) {
            const int row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
            float acc = 0.0f;
            for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
            c[row * n + col] = acc;
        }
    }
}
