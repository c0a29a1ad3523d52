import triton
import triton.language as tl


@triton.jit
def vector_add(a, b, c, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(a + offsets, mask=mask)
    y = tl.load(b + offsets, mask=mask)
    tl.store(c + offsets, x - y, mask=mask)  # subtracts
