#define STEPS 32

extern "C" __global__ void two_paths(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int warp = t / 32, lane = t % 32;
    const int i = 64 * (warp / 2) + 2 * lane + warp % 2;  // even warps take even elements, odd warps odd ones
    if (i < n) {
        const float v = x[i];
        float y = v;
        if (warp % 2 == 0) {  // the same for all 32 lanes of a warp: no warp runs both paths
            for (int s = 0; s < STEPS; ++s) y = y * 0.5f + v;
        } else {
            for (int s = 0; s < STEPS; ++s) y = y * 0.25f + v;
        }
        out[i] = y;
    }
}
