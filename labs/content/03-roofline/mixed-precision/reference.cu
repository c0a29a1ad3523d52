#define PER_THREAD 16  // each block sums 16 * 256 = 4096 consecutive products
#define BLOCK 256

// x and y hold float16 bits (IEEE binary16): the harness passes them as 16-bit words, and one PTX instruction
// turns such a word into a float.
__device__ __forceinline__ float half_to_float(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// out[b] is the sum of x[i] * y[i] over block b's 4096 elements.
extern "C" __global__ void dot16(const unsigned short* __restrict__ x, const unsigned short* __restrict__ y,
                                 float* __restrict__ out, int n)
{
    __shared__ float partial[BLOCK];
    const int t = threadIdx.x, base = blockIdx.x * PER_THREAD * BLOCK + t;
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {  // 32 independent 2-byte loads: a warp reads 64 consecutive bytes
        const int i = base + j * BLOCK;
        acc = fmaf(half_to_float(x[i]), half_to_float(y[i]), acc);  // the product of two halves is exact
    }
    partial[t] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {  // sequential addressing: no bank conflicts
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}
