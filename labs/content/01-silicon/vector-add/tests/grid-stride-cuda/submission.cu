extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n)
{
    // A grid-stride loop: correct for any grid, and each pass a warp still touches 32 consecutive floats.
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        c[i] = a[i] + b[i];
    }
}
