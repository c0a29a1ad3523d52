#define THREADS 128
// -infinity. Not INFINITY: NVRTC, which compiles kernels for the GPU, has no math.h and so none of its macros.
#define NEG_INF (-__int_as_float(0x7f800000))

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
    __shared__ float buf[THREADS];
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    int t = threadIdx.x;

    float m = NEG_INF;  // pass 1: the row's maximum, so that no expf() overflows
    for (int j = t; j < cols; j += THREADS) m = fmaxf(m, in[j]);
    buf[t] = m;
    __syncthreads();
    for (int step = THREADS / 2; step > 0; step /= 2) {
        if (t < step) buf[t] = fmaxf(buf[t], buf[t + step]);
        __syncthreads();
    }
    m = buf[0];
    __syncthreads();  // everyone has read buf[0] before it is overwritten

    float total = 0.0f;  // pass 2: the sum of exponentials
    for (int j = t; j < cols; j += THREADS) total += expf(in[j] - m);
    buf[t] = total;
    __syncthreads();
    for (int step = THREADS / 2; step > 0; step /= 2) {
        if (t < step) buf[t] += buf[t + step];
        __syncthreads();
    }
    total = buf[0];

    for (int j = t; j < cols; j += THREADS) out[j] = expf(in[j] - m) / total;  // pass 3: normalise
}
