#define BM 64  // the block's tile of C is BM x BM
#define BK 16  // the k-slice staged per step
#define TM 4   // each thread computes TM x TM outputs: rows ty + 16 i, columns tx + 16 j

extern "C" __global__ void __launch_bounds__(256) matmul(const float* __restrict__ a, const float* __restrict__ b,
                                                        float* __restrict__ c, int n)
{
    __shared__ float sa[BM][BK];  // 64 rows of A, 16 columns
    __shared__ float sb[BK][BM];  // 16 rows of B, 64 columns
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BM;
    float acc[TM][TM] = {};
    for (int k0 = 0; k0 < n; k0 += BK) {
#pragma unroll
        for (int l = 0; l < 4; ++l) {  // 1024 elements of each tile, 4 per thread, coalesced
            const int e = tid + 256 * l;
            sa[e / BK][e % BK] = a[(row0 + e / BK) * n + k0 + e % BK];
            sb[e / BM][e % BM] = b[(k0 + e / BM) * n + col0 + e % BM];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ar[TM], br[TM];  // the fragments: 8 shared loads feed 16 FMAs
#pragma unroll
            for (int i = 0; i < TM; ++i) ar[i] = sa[ty + 16 * i][k];  // 2 addresses per warp: broadcast
#pragma unroll
            for (int j = 0; j < TM; ++j) br[j] = sb[k][tx + 16 * j];  // 16 consecutive words: no conflict
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TM; ++j) acc[i][j] += ar[i] * br[j];
        }
        __syncthreads();  // before the next slice overwrites the tiles
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TM; ++j) c[(row0 + ty + 16 * i) * n + col0 + tx + 16 * j] = acc[i][j];
}
