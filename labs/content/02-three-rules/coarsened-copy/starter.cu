extern "C" __global__ void copy4(const float* a, float* out, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 4; ++k) {
        const int i = 4 * t + k;  // TODO: neighbouring threads are 4 elements apart: 16 sectors per request
        if (i < n) out[i] = a[i];
    }
}
