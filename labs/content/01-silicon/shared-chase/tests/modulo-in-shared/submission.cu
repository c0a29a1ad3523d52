#define NMAX 8192  // 32 KiB of shared memory: the largest chain this kernel holds

extern "C" __global__ void chase_shared(const int* __restrict__ nxt, int* __restrict__ out, int steps, int n)
{
    __shared__ int tile[NMAX];
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        tile[k] = nxt[k];  // the block's threads copy the chain once, neighbouring threads neighbouring ints
    }
    __syncthreads();
    int j = threadIdx.x;
    for (int s = 0; s < steps; ++s) {
        j = (tile[j] + 32) % n;  // the wrap as a modulo: the same chain as & (n - 1) for a power of two
    }
    out[threadIdx.x] = j;
}
