#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose(const float* __restrict__ a, float* __restrict__ out, int n)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = a[(y + j) * n + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;  // the output tile of block (bx, by) is tile (by, bx)
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
