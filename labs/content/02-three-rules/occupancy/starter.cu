#define PER_THREAD 16  // each block handles 16 * 256 = 4096 consecutive elements
#define BLOCK 256

extern "C" __global__ void scale(const float* x, float* out, int n)
{
    const int base = blockIdx.x * PER_THREAD * BLOCK + threadIdx.x;
    // Correct, and coalesced, but x and out may alias, so each load must wait for the store before it:
    // one load in flight per thread.
    // TODO: load all PER_THREAD values into registers first (float v[PER_THREAD], #pragma unroll), then store.
    for (int j = 0; j < PER_THREAD; ++j) {
        const int i = base + j * BLOCK;
        out[i] = 2.0f * x[i] + 1.0f;
    }
}
