#define BM 64  // the block's tile of C is BM x BM
#define BK 16  // the k-slice staged per step
#define TM 4   // each thread computes TM x TM outputs: rows ty + 16 i, columns tx + 16 j

// Double buffering: two copies of each tile. While the block multiplies slice k0 from one copy, each thread has
// already loaded its part of slice k0 + BK from global memory into registers, and stores it into the other copy
// afterwards: the loads' latency hides behind the FMAs, and one barrier per slice does where the reference has two.
extern "C" __global__ void __launch_bounds__(256) matmul(const float* __restrict__ a, const float* __restrict__ b,
                                                        float* __restrict__ c, int n)
{
    __shared__ float sa[2][BM][BK];
    __shared__ float sb[2][BK][BM];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BM;
    float acc[TM][TM] = {};
    float na[4], nb[4];  // the next slice, on its way from global memory
#pragma unroll
    for (int l = 0; l < 4; ++l) {  // slice 0 straight into copy 0; consecutive threads, consecutive addresses
        const int e = tid + 256 * l;
        sa[0][e / BK][e % BK] = a[(row0 + e / BK) * n + e % BK];
        sb[0][e / BM][e % BM] = b[(e / BM) * n + col0 + e % BM];
    }
    __syncthreads();
    int cur = 0;
    for (int k0 = 0; k0 < n; k0 += BK) {
        const bool more = k0 + BK < n;
        if (more) {
#pragma unroll
            for (int l = 0; l < 4; ++l) {
                const int e = tid + 256 * l;
                na[l] = a[(row0 + e / BK) * n + k0 + BK + e % BK];
                nb[l] = b[(k0 + BK + e / BM) * n + col0 + e % BM];
            }
        }
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ar[TM], br[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i) ar[i] = sa[cur][ty + 16 * i][k];  // 2 addresses per warp: broadcast
#pragma unroll
            for (int j = 0; j < TM; ++j) br[j] = sb[cur][k][tx + 16 * j];  // 16 consecutive words: no conflict
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TM; ++j) acc[i][j] += ar[i] * br[j];
        }
        if (more) {  // the other copy was last read before the previous barrier: free to overwrite
#pragma unroll
            for (int l = 0; l < 4; ++l) {
                const int e = tid + 256 * l;
                sa[cur ^ 1][e / BK][e % BK] = na[l];
                sb[cur ^ 1][e / BM][e % BM] = nb[l];
            }
        }
        __syncthreads();  // the next slice is in place, and everyone is done reading this one
        cur ^= 1;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TM; ++j) c[(row0 + ty + 16 * i) * n + col0 + tx + 16 * j] = acc[i][j];
}
