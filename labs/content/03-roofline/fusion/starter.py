from numba import cuda


@cuda.jit
def fused(x, y, tmp, out):
    i = cuda.grid(1)
    if i < x.size:
        tmp[i] = 2 * x[i] + y[i]  # TODO: what two kernels would do: the intermediate goes to memory...
        out[i] = max(tmp[i], 0.0)  # ...and comes back; keep it in a register instead
