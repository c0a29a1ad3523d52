#define THREADS 128
// -infinity. Not INFINITY: NVRTC, which compiles kernels for the GPU, has no math.h and so none of its macros.
#define NEG_INF (-__int_as_float(0x7f800000))

// The (maximum, sum of exp(x - maximum)) of two parts, from each part's pair.
__device__ void combine(float& m, float& d, float m2, float d2)
{
    // TODO: the new maximum is fmaxf(m, m2); each sum was taken against its own maximum,
    // so rescale it by expf(old maximum - new maximum) before adding. Mind two empty parts (NEG_INF).
    d = d + d2;
    m = fmaxf(m, m2);
}

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
    __shared__ float maxima[THREADS], sums[THREADS];
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    int t = threadIdx.x;

    float m = NEG_INF, d = 0.0f;  // one pass: a running maximum and sum, rescaled as the maximum grows
    for (int j = t; j < cols; j += THREADS) combine(m, d, in[j], 1.0f);
    maxima[t] = m;
    sums[t] = d;
    __syncthreads();
    for (int step = THREADS / 2; step > 0; step /= 2) {
        if (t < step) combine(maxima[t], sums[t], maxima[t + step], sums[t + step]);
        __syncthreads();
    }
    m = maxima[0];
    float total = sums[0];
    for (int j = t; j < cols; j += THREADS) out[j] = expf(in[j] - m) / total;  // the second pass: normalise
}
