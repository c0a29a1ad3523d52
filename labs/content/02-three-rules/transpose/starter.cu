#define TILE 32  // each block transposes one 32 x 32 tile
#define ROWS 8   // with 32 x 8 threads, each thread moves TILE / ROWS = 4 elements

extern "C" __global__ void transpose(const float* a, float* out, int n)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        // TODO: the read is coalesced, this write is not: stage the tile in shared memory.
        out[x * n + (y + j)] = a[(y + j) * n + x];
    }
}
