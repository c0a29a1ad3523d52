from numba import cuda, int32

NMAX = 8192  # the largest chain this kernel holds: 32 KiB of shared memory


@cuda.jit
def chase_shared(nxt, out, steps):
    tile = cuda.shared.array(NMAX, int32)
    t = cuda.threadIdx.x
    n = nxt.size
    for k in range(t, n, 32):  # the warp copies 32 consecutive ints at a time: coalesced, and once
        tile[k] = nxt[k]
    cuda.syncthreads()  # every slot is written before anyone follows the chain through it
    mask = n - 1
    j = t
    for _ in range(steps):
        j = (tile[j] + 32) & mask  # each step waits for shared memory only
    out[t] = j
