// p pipeline stages, one thread each, one time slot per forward or backward; __syncthreads() ends a slot.
extern "C" __global__ void one_f_one_b(int* fwd, int* bwd, int* inflight, int p, int m)
{
    int s = threadIdx.x;
    for (int j = 0; j < m; ++j) fwd[s * m + j] = bwd[s * m + j] = -1;  // -1: not run yet
    __syncthreads();
    int warmup = min(p - 1 - s, m);  // forwards before the first backward
    int nf = 0, nb = 0, held = 0, peak = 0;
    for (int t = 0; t < 2 * (m + p - 1); ++t) {
        // TODO: 1F1B order. Run `warmup` forwards, then one forward and one backward in turn, then the last
        // backwards. This is GPipe's order instead (every forward, then every backward): same length, more memory.
        bool forward = nf < m;
        bool ready = false;
        if (forward) {
            ready = s == 0 || (fwd[(s - 1) * m + nf] >= 0 && fwd[(s - 1) * m + nf] < t);
        } else if (nb < m) {
            int dep = s == p - 1 ? fwd[s * m + nb] : bwd[(s + 1) * m + nb];
            ready = dep >= 0 && dep < t;
        }
        __syncthreads();  // everyone has read slot t - 1's state before anyone writes slot t's
        if (ready && forward) {
            fwd[s * m + nf++] = t;
            peak = max(peak, ++held);
        } else if (ready) {
            bwd[s * m + nb++] = t;
            --held;
        }
        __syncthreads();
    }
    inflight[s] = peak;
}
