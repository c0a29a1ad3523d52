from numba import cuda, float32

STEPS = 32


@cuda.jit
def two_paths(x, out):
    # No branch around the work: each lane picks its factor (a select, not a jump) and every lane of every
    # warp runs the same loop. Element i stays with thread i.
    i = cuda.grid(1)
    if i < x.size:
        f = float32(0.5) if i % 2 == 0 else float32(0.25)
        v = x[i]
        y = v
        for _ in range(STEPS):
            y = y * f + v
        out[i] = y
