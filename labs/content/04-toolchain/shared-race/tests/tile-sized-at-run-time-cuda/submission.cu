extern "C" __global__ void reverse_blocks(const float* __restrict__ a, float* __restrict__ out, int n)
{
    __shared__ float tile[blockDim.x];  // wrong: a static shared array's size must be known when compiling
    int t = threadIdx.x;
    int base = blockIdx.x * blockDim.x;
    tile[t] = a[base + t];
    __syncthreads();
    out[base + t] = tile[blockDim.x - 1 - t];
}
