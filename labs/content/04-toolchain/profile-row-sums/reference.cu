#define THREADS 128

extern "C" __global__ void row_sums(const float* __restrict__ x, float* __restrict__ out, int rows, int cols)
{
    __shared__ float buf[THREADS];
    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int row = (blockIdx.x * blockDim.x + tid) / 32;  // a warp per row
    float acc = 0.0f;
    if (row < rows) {
        for (int j = lane; j < cols; j += 32) acc += x[(size_t)row * cols + j];  // 32 consecutive floats
    }
    buf[tid] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s /= 2) {  // sequential addressing: one word per bank
        if (lane < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (lane == 0 && row < rows) out[row] = buf[tid];
}
