// Ring all-gather among P ranks simulated in one block: threadIdx.y is the rank, one __syncthreads() a ring step.
extern "C" __global__ void ring_all_gather(const float* __restrict__ part, float* out, int P, int c)
{
    int r = threadIdx.y;
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // offset inside every chunk
    int n = P * c;                                  // floats per rank once gathered
    if (i < c) out[r * n + r * c + i] = part[r * c + i];  // rank r owns chunk r
    __syncthreads();
    int left = (r - 1 + P) % P;
    for (int s = 0; s < P - 1; ++s) {
        int k = (r - 1 - s + P) % P;  // the chunk rank r-1 got s steps ago (its own at s = 0)
        if (i < c) out[r * n + k * c + i] = out[left * n + k * c + i];
        __syncthreads();
    }
}
