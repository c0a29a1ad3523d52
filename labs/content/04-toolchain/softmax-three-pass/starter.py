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
    cuda.syncthreads()  # everyone has read buf[0] before it is overwritten

    # TODO pass 2: each thread sums exp(x - m) over its columns; reduce the sums in buf as above.
    # TODO pass 3: y = exp(x - m) / total over the row.
