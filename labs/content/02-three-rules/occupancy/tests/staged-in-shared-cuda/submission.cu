#define PER_THREAD 16
#define BLOCK 256

// Staging through shared memory buys nothing here (each value is used once by the thread that loads it)
// and its 16 KiB per block push the SM from 2 resident blocks to 1.
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float stage[PER_THREAD * BLOCK];
    const int start = blockIdx.x * PER_THREAD * BLOCK, t = threadIdx.x;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) stage[t + j * BLOCK] = x[start + t + j * BLOCK];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) out[start + t + j * BLOCK] = 2.0f * stage[t + j * BLOCK] + 1.0f;
}
