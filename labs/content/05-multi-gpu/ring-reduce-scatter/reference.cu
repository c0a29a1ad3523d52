// Ring reduce-scatter among P ranks simulated in one block: threadIdx.y is the rank, and one
// __syncthreads() is one ring step (NCCL waits on its neighbour's flag instead).
extern "C" __global__ void ring_reduce_scatter(const float* __restrict__ x, float* buf, float* __restrict__ out,
                                               int P, int c)
{
    int r = threadIdx.y;
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // offset inside every chunk
    int n = P * c;                                  // floats per rank
    if (i < c) {
        for (int k = 0; k < P; ++k) buf[r * n + k * c + i] = x[r * n + k * c + i];
    }
    __syncthreads();
    int left = (r - 1 + P) % P;
    for (int s = 0; s < P - 1; ++s) {
        int k = (r - 2 - s + 2 * P) % P;  // the chunk rank r-1 sends at step s, summed over s + 1 ranks
        if (i < c) buf[r * n + k * c + i] += buf[left * n + k * c + i];
        __syncthreads();
    }
    if (i < c) out[r * c + i] = buf[r * n + r * c + i];
}
