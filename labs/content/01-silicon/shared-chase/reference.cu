#define NMAX 8192  // the largest chain this kernel holds: 32 KiB of shared memory

extern "C" __global__ void chase_shared(const int* __restrict__ nxt, int* __restrict__ out, int steps, int n)
{
    __shared__ int tile[NMAX];
    const int t = threadIdx.x;
    for (int k = t; k < n; k += 32) {
        tile[k] = nxt[k];  // the warp copies 32 consecutive ints at a time: coalesced, and once
    }
    __syncthreads();  // every slot is written before anyone follows the chain through it
    const int mask = n - 1;
    int j = t;
    for (int s = 0; s < steps; ++s) {
        j = (tile[j] + 32) & mask;  // each step waits for shared memory only
    }
    out[t] = j;
}
