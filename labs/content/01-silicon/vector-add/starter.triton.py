import triton
import triton.language as tl


@triton.jit
def vector_add(a, b, c, n, BLOCK: tl.constexpr):
    # Each program handles BLOCK consecutive elements.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    # TODO: mask the offsets past n, load a and b, store their sum in c.
    pass
