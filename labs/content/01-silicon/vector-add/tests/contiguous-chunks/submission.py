from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    # Four elements per thread, side by side: thread t adds 4 t .. 4 t + 3. Every element once (the last three
    # quarters of the grid find nothing to do), but a warp's 32 loads are 16 bytes apart: not coalesced.
    t = cuda.grid(1)
    for k in range(4):
        i = 4 * t + k
        if i < c.size:
            c[i] = a[i] + b[i]
