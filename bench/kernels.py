"""CUDA C++ sources the GPU benchmarks and tests compile: small, known kernels with known work."""

from __future__ import annotations

VECTOR_ADD = r"""
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""

COPY = r"""
extern "C" __global__ void copy_f32(const float* __restrict__ src, float* __restrict__ dst, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

extern "C" __global__ void copy_f32x4(const float4* __restrict__ src, float4* __restrict__ dst, long long n4)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n4) dst[i] = src[i];
}
"""

TRANSPOSE = r"""
#define TILE 32
#define ROWS 8
extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[TILE][TILE + 1];  // +1: no bank conflicts on the column read
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
"""

DYN_SMEM = r"""
extern "C" __global__ void dyn_reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    extern __shared__ float buf[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? x[i] : 0.f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = buf[0];
}
"""

# Many live values per thread: a register-heavy kernel for the occupancy comparison.
REG_HEAVY = r"""
extern "C" __global__ void reg_heavy(const float* __restrict__ x, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[48];
#pragma unroll
    for (int k = 0; k < 48; ++k) v[k] = x[(i + k * 977) % n];
    float acc = 0.f;
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int k = 0; k < 48; ++k) acc = fmaf(acc, v[k], v[(k + r) % 48]);
    if (i < n) out[i] = acc;
}
"""

TRAP = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 12345) __trap();
    if (i < n) c[i] = a[i] + b[i];
}
"""

ILLEGAL_ADDRESS = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i + 64 * 1024 * 1024] = a[i] + b[i];  // 256 MiB past the end
}
"""

FAR_ADDRESS = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i + (1 << 30)] = a[i] + b[i];  // 4 GiB past the end
}
"""

DEVICE_ASSERT = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n - 100);
    if (i < n) c[i] = a[i] + b[i];
}
"""

DEVICE_ASSERT_DECL = r"""
extern "C" __device__ void __assertfail(const char*, const char*, unsigned, const char*, unsigned long);
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (!(i < n - 100)) __assertfail("i < n - 100", "submission.cu", 5, "vector_add", 1);
    if (i < n) c[i] = a[i] + b[i];
}
"""

HANG = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = clock64();
    while (clock64() >= start) { }  // the SM clock never runs backwards: this never ends
    if (i < n) c[i] = a[i] + b[i];
}
"""

COMPILE_ERROR = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i]
}
"""

NUMBA_VECTOR_ADD = """
from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""

NUMBA_HANG = """
from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    while c[0] == c[0]:
        c[1] = c[1]
    if i < c.size:
        c[i] = a[i] + b[i]
"""

NUMBA_ILLEGAL = """
from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i + 1073741824] = a[i] + b[i]
"""
