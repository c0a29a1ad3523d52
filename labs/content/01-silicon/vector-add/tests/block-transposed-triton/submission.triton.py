import triton
import triton.language as tl


@triton.jit
def vector_add(a, b, c, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    # Each element once, but the block is read as a 32 x 32 tile's columns: neighbouring r are 32 apart.
    offsets = tl.program_id(0) * BLOCK + (r % 32) * 32 + r // 32
    mask = offsets < n
    x = tl.load(a + offsets, mask=mask)
    y = tl.load(b + offsets, mask=mask)
    tl.store(c + offsets, x + y, mask=mask)
