from numba import cuda, float32

PER_THREAD = 16
BLOCK = 256


@cuda.jit
def dot16(x, y, out):
    # Correct, and the float32 accumulator is right, but one lane per block does all 4096 products: every
    # warp request carries 1 useful lane of 32, each load waits for the one before, and the GPU idles.
    if cuda.threadIdx.x == 0:
        start = cuda.blockIdx.x * PER_THREAD * BLOCK
        acc = float32(0.0)
        for i in range(start, start + PER_THREAD * BLOCK):
            acc += float32(x[i]) * float32(y[i])
        out[cuda.blockIdx.x] = acc
