extern "C" __global__ void row_sums(const float* x, float* out, int rows, int cols)
{
    // One thread per row: simple and correct. The launch gives a warp per row; this uses one thread of it.
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int j = 0; j < cols; ++j) acc += x[(size_t)r * cols + j];
        out[r] = acc;
    }
}
