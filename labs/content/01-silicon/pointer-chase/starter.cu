extern "C" __global__ void chase(const int* nxt, int* out, int steps, int n)
{
    int t = threadIdx.x;
    int j = t;
    // TODO: take `steps` dependent steps, j = (nxt[j] + 32) & (n - 1).
    out[t] = j;
}
