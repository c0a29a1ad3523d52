import math

from numba import cuda, float32

THREADS = 128


@cuda.jit(device=True)
def combine(m1, d1, m2, d2):
    """The (maximum, sum of exp(x - maximum)) of two parts, from each part's pair."""
    # TODO: the new maximum is max(m1, m2); each sum was taken against its own maximum,
    # so rescale it by exp(old maximum - new maximum) before adding. Mind two empty parts (-inf).
    return max(m1, m2), d1 + d2


@cuda.jit
def softmax(x, y):
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    cols = x.shape[1]
    maxima = cuda.shared.array(THREADS, float32)
    sums = cuda.shared.array(THREADS, float32)

    m, d = -math.inf, 0.0  # one pass: a running maximum and a running sum, rescaled as the maximum grows
    for j in range(t, cols, THREADS):
        m, d = combine(m, d, x[row, j], 1.0)
    maxima[t], sums[t] = m, d
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            maxima[t], sums[t] = combine(maxima[t], sums[t], maxima[t + step], sums[t + step])
        cuda.syncthreads()
        step //= 2
    m, total = maxima[0], sums[0]

    for j in range(t, cols, THREADS):  # the second and last pass: normalise
        y[row, j] = math.exp(x[row, j] - m) / total
