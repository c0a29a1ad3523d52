// Ring reduce-scatter among P ranks simulated in one block: threadIdx.y is the rank, and one
// __syncthreads() is one ring step. Rank r's data is x[r * n ... r * n + n), n = P * c, in P chunks of c.
extern "C" __global__ void ring_reduce_scatter(const float* x, float* buf, float* out, int P, int c)
{
    int r = threadIdx.y;
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // the offset inside a chunk this thread moves
    int n = P * c;
    if (i < c) {
        for (int k = 0; k < P; ++k) buf[r * n + k * c + i] = x[r * n + k * c + i];  // each rank starts from its own data
    }
    __syncthreads();
    int left = (r - 1 + P) % P;  // the rank that sends to this one
    for (int s = 0; s < P - 1; ++s) {
        // TODO: which chunk k arrives from `left` at step s? Add it into this rank's chunk k so that,
        // after P - 1 steps, chunk r of rank r holds the sum over all ranks.
        int k = 0;
        if (i < c) buf[r * n + k * c + i] += buf[left * n + k * c + i];
        __syncthreads();
    }
    if (i < c) out[r * c + i] = buf[r * n + r * c + i];
}
