import math

from numba import cuda, float32

THREADS = 128


@cuda.jit
def softmax(x, y):
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    cols = x.shape[1]
    maxima = cuda.shared.array(THREADS, float32)
    sums = cuda.shared.array(THREADS, float32)

    m, d = -math.inf, 0.0  # one pass: a running maximum and a running sum, rescaled as the maximum grows
    for j in range(t, cols, THREADS):
        v = x[row, j]
        if v > m:
            d = d * math.exp(m - v) + 1.0  # exp(-inf) is 0: the first column needs no case of its own
            m = v
        else:
            d += math.exp(v - m)

    # No pairs in the trees: a max tree finds the row's maximum, each thread rescales its own sum to it once,
    # and a plain sum tree adds the rescaled sums.
    maxima[t] = m
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            maxima[t] = max(maxima[t], maxima[t + step])
        cuda.syncthreads()
        step //= 2
    row_max = maxima[0]
    sums[t] = d * math.exp(m - row_max) if d > 0.0 else 0.0  # no columns: 0, never -inf - -inf
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            sums[t] += sums[t + step]
        cuda.syncthreads()
        step //= 2
    total = sums[0]

    for j in range(t, cols, THREADS):  # the second and last pass: normalise
        y[row, j] = math.exp(x[row, j] - row_max) / total
