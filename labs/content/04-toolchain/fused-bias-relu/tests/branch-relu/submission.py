from numba import cuda

SCALE = 2.0


@cuda.jit
def bias_relu(x, bias, y):
    col, row = cuda.grid(2)
    if row < y.shape[0] and col < y.shape[1]:
        t = SCALE * x[row, col] + bias[col]  # t lives in a register
        y[row, col] = t if t > 0.0 else 0.0
