// Recursive doubling among P ranks simulated in one block: threadIdx.y is the rank, a __syncthreads() a step's end.
// Rank r's buffer is out[r * c ... r * c + c).
extern "C" __global__ void recursive_doubling(const float* x, float* out, int P, int c)
{
    int r = threadIdx.y;
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // the offset this thread adds, on every rank
    if (i < c) out[r * c + i] = x[r * c + i];
    __syncthreads();
    for (int d = 1; d < P; d *= 2) {
        int partner = r ^ d;  // the rank d away, in the other half of a group of 2 d: pairs swap, both add
        float v = i < c ? out[partner * c + i] : 0.0f;  // receive the partner's whole buffer...
        __syncthreads();  // ...before anyone adds into theirs
        if (i < c) out[r * c + i] += v;
        __syncthreads();  // the end of the step
    }
}
