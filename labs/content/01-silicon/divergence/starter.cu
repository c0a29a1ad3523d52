#define STEPS 32

extern "C" __global__ void two_paths(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // TODO: neighbouring lanes take different paths
    if (i < n) {
        float v = x[i], y = v;
        if (i % 2 == 0) {
            for (int s = 0; s < STEPS; ++s) y = y * 0.5f + v;
        } else {
            for (int s = 0; s < STEPS; ++s) y = y * 0.25f + v;
        }
        out[i] = y;
    }
}
