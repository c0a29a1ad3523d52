import triton
import triton.language as tl


@triton.jit
def softmax(x, y, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = row * cols
    lanes = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)  # each lane's running maximum and sum
    d = tl.zeros([BLOCK], tl.float32)
    for j in range(0, cols, BLOCK):
        v = tl.load(x + start + j + lanes, mask=j + lanes < cols, other=float("-inf"))
        m_new = tl.maximum(m, v)
        # TODO: rescale d, taken against m, to the new maximum before adding exp(v - m_new).
        # Mind lanes that have seen no column yet (m_new is -inf, and exp(-inf - (-inf)) is NaN).
        d = d + tl.exp(v - m_new)
        m = m_new
    row_max = tl.max(m, 0)  # combine the lanes' pairs
    total = tl.sum(tl.where(m == float("-inf"), 0.0, d * tl.exp(m - row_max)), 0)
    for j in range(0, cols, BLOCK):  # normalise
        mask = j + lanes < cols
        v = tl.load(x + start + j + lanes, mask=mask)
        tl.store(y + start + j + lanes, tl.exp(v - row_max) / total, mask=mask)
