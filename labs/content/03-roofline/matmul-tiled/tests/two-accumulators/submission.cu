#define TILE 16

extern "C" __global__ void matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                  int n)
{
    __shared__ float sa[TILE][TILE];
    __shared__ float sb[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx;
    const int row = blockIdx.y * TILE + ty;
    float even = 0.0f, odd = 0.0f;  // two independent chains of FMAs: neither waits for the other's last add
    for (int t = 0; t < n / TILE; ++t) {
        sa[ty][tx] = a[row * n + t * TILE + tx];
        sb[ty][tx] = b[(t * TILE + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k += 2) {
            even = fmaf(sa[ty][k], sb[k][tx], even);
            odd = fmaf(sa[ty][k + 1], sb[k + 1][tx], odd);
        }
        __syncthreads();
    }
    c[row * n + col] = even + odd;
}
