// Megatron-LM's MLP, Y = GeLU(X A) B, over P ranks simulated in one block per token (threadIdx.y is the rank):
// A split by columns, B by rows, one all-reduce of the partial outputs.
__device__ float gelu(float v)
{
    return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

extern "C" __global__ void tp_mlp(const float* __restrict__ x, const float* __restrict__ a, const float* __restrict__ b,
                                  float* z, float* partial, float* __restrict__ y, int P, int m, int h, int f)
{
    int r = threadIdx.y, t = threadIdx.x, step = blockDim.x;
    int row = blockIdx.x;  // one token per block
    int fp = f / P;        // MLP columns per rank
    float* zr = z + ((size_t)r * m + row) * fp;
    // column-parallel A: GeLU is elementwise on rank r's own columns, so no communication
    for (int u = t; u < fp; u += step) {
        float acc = 0.0f;
        for (int k = 0; k < h; ++k) acc += x[row * h + k] * a[(size_t)k * f + r * fp + u];
        zr[u] = gelu(acc);
    }
    __syncthreads();
    // row-parallel B: rank r's product is one term of the sum over ranks
    for (int j = t; j < h; j += step) {
        float acc = 0.0f;
        for (int u = 0; u < fp; ++u) acc += zr[u] * b[(size_t)(r * fp + u) * h + j];
        partial[((size_t)r * m + row) * h + j] = acc;
    }
    // TODO: y[r] must be the full output on every rank, the sum over all ranks of their partial products.
    // Place the collective Megatron needs here (a barrier, then the sum), and nowhere else.
    for (int j = t; j < h; j += step) y[((size_t)r * m + row) * h + j] = partial[((size_t)r * m + row) * h + j];
}
