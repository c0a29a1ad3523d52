from numba import cuda


@cuda.jit
def scale(x, out):
    t, threads = cuda.grid(1), cuda.gridsize(1)
    chunk = (x.size + threads - 1) // threads
    for i in range(t * chunk, min((t + 1) * chunk, x.size)):  # neighbouring threads are chunk elements apart
        out[i] = 2 * x[i] + 1
