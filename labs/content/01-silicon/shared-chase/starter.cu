#define NMAX 8192  // the largest chain this kernel holds: 32 KiB of shared memory

extern "C" __global__ void chase_shared(const int* nxt, int* out, int steps, int n)
{
    __shared__ int tile[NMAX];
    int t = threadIdx.x;
    // TODO: copy nxt into tile, the 32 threads together, and make sure every copy is done before any thread
    // chases. Then take the steps in tile, not in nxt.
    int j = t;
    for (int s = 0; s < steps; ++s) {
        j = (nxt[j] + 32) & (n - 1);  // in global memory, as in the pointer-chasing exercise
    }
    out[t] = j;
}
