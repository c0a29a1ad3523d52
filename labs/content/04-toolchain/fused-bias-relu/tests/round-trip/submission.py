from numba import cuda

SCALE = 2.0


@cuda.jit
def bias_relu(x, bias, y):
    col, row = cuda.grid(2)
    inside = row < y.shape[0] and col < y.shape[1]
    if inside:
        y[row, col] = SCALE * x[row, col] + bias[col]  # the first kernel's store of t...
    # ...a barrier between them, as a kernel boundary would be: the compiler may no longer keep t in a
    # register (without it, NVVM forwards the store to the load and the round trip never reaches memory)
    cuda.syncthreads()
    if inside:
        y[row, col] = max(y[row, col], 0.0)  # ...and the second kernel's load of it: one launch, same bytes
