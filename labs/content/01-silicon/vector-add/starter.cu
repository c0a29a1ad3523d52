extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // TODO: guard the last block, then compute c[i] from a[i] and b[i].
}
