#define TILE 16

extern "C" __global__ void matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                  int n)
{
    __shared__ float sa[TILE][TILE];
    __shared__ float sb[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx;
    const int row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        sa[ty][tx] = a[row * n + t * TILE + tx];  // coalesced: tx walks along a row of A and of B
        sb[ty][tx] = b[(t * TILE + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += sa[ty][k] * sb[k][tx];  // each element used TILE times
        __syncthreads();  // before the next tiles overwrite these
    }
    c[row * n + col] = acc;
}
