extern "C" __global__ void saxpy(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                                 float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = alpha * x[i] + y[i];
    }
}
