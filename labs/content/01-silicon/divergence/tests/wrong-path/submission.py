from numba import cuda, float32

STEPS = 32


@cuda.jit
def two_paths(x, out):
    t = cuda.grid(1)
    warp, lane = t // 32, t % 32
    i = 64 * (warp // 2) + 2 * lane + warp % 2
    if i < x.size:
        if warp % 2 == 1:  # the paths swapped: even elements get the odd recurrence
            v = x[i]
            y = v
            for _ in range(STEPS):
                y = y * float32(0.5) + v
            out[i] = y
        else:
            v = x[i]
            y = v
            for _ in range(STEPS):
                y = y * float32(0.25) + v
            out[i] = y
