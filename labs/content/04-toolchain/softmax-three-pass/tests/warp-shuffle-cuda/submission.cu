#define THREADS 128
#define WARPS (THREADS / 32)
#define FULL 0xffffffffu
#define NEG_INF (-__int_as_float(0x7f800000))

// The three passes of the reference, each block-wide reduction taken in registers: a butterfly of warp shuffles
// leaves every lane of a warp with its warp's result, one word per warp goes to shared memory, and every thread
// combines the four. Each pass has its own words, so no barrier is needed before the next pass writes.
__device__ float warp_max(float v)
{
    for (int d = 16; d > 0; d >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, d));
    return v;
}

__device__ float warp_sum(float v)
{
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL, v, d);
    return v;
}

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
    __shared__ float maxima[WARPS], sums[WARPS];
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    const int t = threadIdx.x, lane = t % 32, w = t / 32;

    float m = NEG_INF;  // pass 1: the row's maximum
    for (int j = t; j < cols; j += THREADS) m = fmaxf(m, in[j]);
    m = warp_max(m);
    if (lane == 0) maxima[w] = m;
    __syncthreads();
    m = maxima[0];
    for (int i = 1; i < WARPS; ++i) m = fmaxf(m, maxima[i]);  // every lane reads the same word: a broadcast

    float total = 0.0f;  // pass 2: the sum of exponentials
    for (int j = t; j < cols; j += THREADS) total += expf(in[j] - m);
    total = warp_sum(total);
    if (lane == 0) sums[w] = total;
    __syncthreads();
    total = 0.0f;
    for (int i = 0; i < WARPS; ++i) total += sums[i];

    for (int j = t; j < cols; j += THREADS) out[j] = expf(in[j] - m) / total;  // pass 3: normalise
}
