#define TILE 32
#define ROWS 8

// No padding: element (r, c) of the tile is kept in column c ^ r. Within one row the XOR is a permutation of
// the 32 columns, and so is it down one column, so a warp's 32 words fall in 32 different banks both ways.
extern "C" __global__ void transpose(const float* __restrict__ a, float* __restrict__ out, int n)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        int r = threadIdx.y + j;
        tile[r][threadIdx.x ^ r] = a[(y + j) * n + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        int c = threadIdx.y + j;
        out[(y + j) * n + x] = tile[threadIdx.x][c ^ threadIdx.x];
    }
}
