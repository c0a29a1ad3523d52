#define THREADS 256

extern "C" __global__ void block_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[THREADS];
    const int tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * THREADS + tid];
    __syncthreads();
    for (int s = 1; s < THREADS; s *= 2) {
        const int index = 2 * s * tid;  // TODO: neighbouring threads touch words 2s apart: bank conflicts
        if (index < THREADS) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
