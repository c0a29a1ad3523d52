#define THREADS 256

extern "C" __global__ void copy4(const float* __restrict__ a, float* __restrict__ out, int n)
{
    const int base = blockIdx.x * 4 * THREADS + threadIdx.x;
    float v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {  // four independent loads before any store: four requests in flight
        const int i = base + k * THREADS;  // a warp reads 32 consecutive floats for each k
        v[k] = i < n ? a[i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int i = base + k * THREADS;
        if (i < n) out[i] = v[k];
    }
}
