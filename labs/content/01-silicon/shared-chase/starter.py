from numba import cuda, int32

NMAX = 8192  # the largest chain this kernel holds: 32 KiB of shared memory


@cuda.jit
def chase_shared(nxt, out, steps):
    tile = cuda.shared.array(NMAX, int32)
    t = cuda.threadIdx.x
    n = nxt.size
    # TODO: copy nxt into tile, the 32 threads together, and make sure every copy is done before any thread
    # chases. Then take the steps in tile, not in nxt.
    j = t
    for _ in range(steps):
        j = (nxt[j] + 32) & (n - 1)  # in global memory, as in the pointer-chasing exercise
    out[t] = j
