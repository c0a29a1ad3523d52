#define THREADS 256

extern "C" __global__ void reverse_blocks(const float* __restrict__ a, float* __restrict__ out, int n)
{
    __shared__ float tile[THREADS];
    int t = threadIdx.x;
    int base = blockIdx.x * THREADS;
    tile[t] = a[base + t];
    // a missing __syncthreads(): thread t reads what thread THREADS - 1 - t may not have written yet
    out[base + t] = tile[THREADS - 1 - t];
}
