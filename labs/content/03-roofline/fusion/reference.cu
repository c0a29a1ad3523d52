extern "C" __global__ void fused(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ tmp,
                                 float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float t = 2.0f * x[i] + y[i];  // stays in a register: 12 bytes per element instead of 20
        out[i] = fmaxf(t, 0.0f);
    }
}
