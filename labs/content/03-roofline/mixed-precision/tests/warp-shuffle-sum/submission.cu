#define PER_THREAD 16  // each block sums 16 * 256 = 4096 consecutive products
#define BLOCK 256

__device__ __forceinline__ float half_to_float(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// The same loads and float accumulator as the reference; the block's sum is taken with warp shuffles,
// then one word per warp in shared memory.
extern "C" __global__ void dot16(const unsigned short* __restrict__ x, const unsigned short* __restrict__ y,
                                 float* __restrict__ out, int n)
{
    __shared__ float warp_sums[BLOCK / 32];
    const int t = threadIdx.x, base = blockIdx.x * PER_THREAD * BLOCK + t;
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        const int i = base + j * BLOCK;
        acc = fmaf(half_to_float(x[i]), half_to_float(y[i]), acc);
    }
    for (int d = 16; d > 0; d >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, d);
    if (t % 32 == 0) warp_sums[t / 32] = acc;
    __syncthreads();
    if (t == 0) {
        float sum = 0.0f;
        for (int w = 0; w < BLOCK / 32; ++w) sum += warp_sums[w];
        out[blockIdx.x] = sum;
    }
}
