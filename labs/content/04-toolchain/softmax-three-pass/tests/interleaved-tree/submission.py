import math

from numba import cuda, float32

THREADS = 128


@cuda.jit
def softmax(x, y):
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    cols = x.shape[1]
    buf = cuda.shared.array(THREADS, float32)

    m = -math.inf  # pass 1: the row's maximum, so that no exp() overflows
    for j in range(t, cols, THREADS):
        m = max(m, x[row, j])
    buf[t] = m
    cuda.syncthreads()
    step = 1  # interleaved tree: thread t combines slots 2 t step and 2 t step + step
    while step < THREADS:
        if t < THREADS // (2 * step):
            buf[2 * step * t] = max(buf[2 * step * t], buf[2 * step * t + step])
        cuda.syncthreads()
        step *= 2
    m = buf[0]
    cuda.syncthreads()  # everyone has read buf[0] before it is overwritten

    total = 0.0  # pass 2: the sum of exponentials
    for j in range(t, cols, THREADS):
        total += math.exp(x[row, j] - m)
    buf[t] = total
    cuda.syncthreads()
    step = 1
    while step < THREADS:
        if t < THREADS // (2 * step):
            buf[2 * step * t] += buf[2 * step * t + step]
        cuda.syncthreads()
        step *= 2
    total = buf[0]

    for j in range(t, cols, THREADS):  # pass 3: normalise
        y[row, j] = math.exp(x[row, j] - m) / total
