extern "C" __global__ void chase(const int* __restrict__ nxt, int* __restrict__ out, int steps, int n)
{
    const int t = threadIdx.x;
    const int mask = n - 1;  // n is a power of two
    int j = t;
    for (int s = 0; s < steps; ++s) {
        j = (nxt[j] + 32) & mask;  // the next address needs this load's value: nothing overlaps
    }
    out[t] = j;
}
