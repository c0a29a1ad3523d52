extern "C" __global__ void fused(const float* x, const float* y, float* tmp, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        tmp[i] = 2.0f * x[i] + y[i];    // TODO: what two kernels would do: the intermediate goes to memory...
        out[i] = fmaxf(tmp[i], 0.0f);   // ...and comes back; keep it in a register instead
    }
}
