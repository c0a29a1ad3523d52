from numba import cuda


@cuda.jit
def chase(nxt, out, steps):
    t = cuda.threadIdx.x
    j = t
    # TODO: take `steps` dependent steps, j = (nxt[j] + 32) & (n - 1), with n = nxt.size.
    out[t] = j
