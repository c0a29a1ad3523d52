from numba import cuda

STEPS = 32


@cuda.jit
def two_paths(x, out):
    i = cuda.grid(1)  # TODO: neighbouring lanes get elements of different kinds: the warp runs both paths
    if i < x.size:
        if i % 2 == 0:
            v = x[i]
            y = v
            for _ in range(STEPS):
                y = y * 0.5 + v
            out[i] = y
        else:
            v = x[i]
            y = v
            for _ in range(STEPS):
                y = y * 0.25 + v
            out[i] = y
