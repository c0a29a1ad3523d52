#define PER_THREAD 16
#define BLOCK 256

// Everything in float16 (PTX's f16 arithmetic on 16-bit words): 11 significant bits, so once a partial sum
// passes 16 its spacing is 2^-6 and the small products added to it are rounded away.
__device__ __forceinline__ unsigned short half_fma(unsigned short a, unsigned short b, unsigned short c)
{
    unsigned short d;
    asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(d) : "h"(a), "h"(b), "h"(c));
    return d;
}

__device__ __forceinline__ unsigned short half_add(unsigned short a, unsigned short b)
{
    unsigned short d;
    asm("add.rn.f16 %0, %1, %2;" : "=h"(d) : "h"(a), "h"(b));
    return d;
}

extern "C" __global__ void dot16(const unsigned short* x, const unsigned short* y, float* out, int n)
{
    __shared__ unsigned short partial[BLOCK];
    const int t = threadIdx.x, base = blockIdx.x * PER_THREAD * BLOCK + t;
    unsigned short acc = 0;  // +0.0 in float16
    for (int j = 0; j < PER_THREAD; ++j) acc = half_fma(x[base + j * BLOCK], y[base + j * BLOCK], acc);
    partial[t] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) partial[t] = half_add(partial[t], partial[t + s]);
        __syncthreads();
    }
    if (t == 0) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(partial[0]));
        out[blockIdx.x] = f;
    }
}
