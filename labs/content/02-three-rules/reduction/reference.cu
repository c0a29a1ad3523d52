#define THREADS 256

extern "C" __global__ void block_sum(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float sdata[THREADS];
    const int tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * THREADS + tid];
    __syncthreads();
    for (int s = THREADS / 2; s >= 32; s /= 2) {  // whole warps, neighbouring words: no bank conflicts
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {  // one warp left: pass partial sums through registers, no barrier needed
        float v = sdata[tid];
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
