// Ring all-gather among P ranks simulated in one block: threadIdx.y is the rank, one __syncthreads() a ring step.
// Rank r's gathered copy is out[r * n ... r * n + n), n = P * c, chunk k at offset k * c.
extern "C" __global__ void ring_all_gather(const float* part, float* out, int P, int c)
{
    int r = threadIdx.y;
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // the offset inside a chunk this thread moves
    int n = P * c;
    if (i < c) out[r * n + r * c + i] = part[r * c + i];  // rank r starts with chunk r only
    __syncthreads();
    int left = (r - 1 + P) % P;  // the rank that sends to this one
    for (int s = 0; s < P - 1; ++s) {
        // TODO: which chunk k does rank `left` hold and pass on at step s? Copy it into this rank's chunk k.
        int k = 0;
        if (i < c) out[r * n + k * c + i] = out[left * n + k * c + i];
        __syncthreads();
    }
}
