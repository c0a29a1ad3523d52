#define TILE 16

extern "C" __global__ void matmul(const float* a, const float* b, float* c, int n)
{
    const int col = blockIdx.x * TILE + threadIdx.x;
    const int row = blockIdx.y * TILE + threadIdx.y;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) {  // TODO: every A and B element is fetched from memory by n threads: tile it
        acc += a[row * n + k] * b[k * n + col];
    }
    c[row * n + col] = acc;
}
