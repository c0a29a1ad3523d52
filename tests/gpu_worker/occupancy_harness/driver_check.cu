// Asks a real GPU's driver what cuda_occupancy.h is checked against in CI: the answers of
// cudaOccupancyMaxActiveBlocksPerMultiprocessor for kernels of known registers and shared memory,
// over block sizes, dynamic shared memory, carveouts and the kernel's maximum dynamic shared memory,
// and whether a launch at the edge of that maximum succeeds. Not part of CI (it needs a GPU):
//
//   nvcc -O2 -arch=native driver_check.cu -o driver_check && ./driver_check > driver.jsonl
//
// Each line: {"cc", "threads", "regs", "static", "dynamic", "max_dynamic", "carveout", "blocks", "err"}
// (blocks -1: the query returned err); launch lines add "launch" (the launch's error name).
#include <cuda_runtime.h>

#include <cstdio>

template <int N, int STATIC>
__global__ void pressure(float *out, int n) {
    __shared__ float fixed[STATIC > 0 ? STATIC / 4 : 1];
    extern __shared__ float dyn[];
    float acc[N];
#pragma unroll
    for (int i = 0; i < N; ++i) acc[i] = threadIdx.x * (i + 1) + n;
    for (int r = 0; r < n; ++r) {
#pragma unroll
        for (int i = 0; i < N; ++i) acc[i] = acc[i] * acc[(i + 1) % N] + 1.0f;
    }
    float sum = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) sum += acc[i];
    if (n < 0) {
        fixed[threadIdx.x % (STATIC > 0 ? STATIC / 4 : 1)] = sum;
        dyn[threadIdx.x] = sum;
        __syncthreads();
        sum += fixed[0] + dyn[0];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

static int cc;
static cudaDeviceProp prop;

template <int N, int STATIC>
void probe(float *out) {
    auto k = pressure<N, STATIC>;
    cudaFuncAttributes a;
    cudaFuncGetAttributes(&a, k);
    const int optin = (int)prop.sharedMemPerBlockOptin - (int)a.sharedSizeBytes;
    const int carveouts[] = {-1, 0, 25, 50, 100};
    const int threads[] = {32, 33, 64, 96, 128, 160, 256, 288, 384, 512, 640, 768, 1000, 1024};
    const int dynamics[] = {0, 1, 1024, 10000, 40000, 49152 - (int)a.sharedSizeBytes,
                            49153 - (int)a.sharedSizeBytes, 100000, optin, optin + 1};
    for (int maxdyn : {49152 - (int)a.sharedSizeBytes, optin}) {
        cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, maxdyn);
        for (int carve : carveouts) {
            cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, carve);
            for (int t : threads) {
                for (int d : dynamics) {
                    int blocks = -1;
                    cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, t, d);
                    if (err != cudaSuccess) blocks = -1;
                    cudaGetLastError();
                    std::printf("{\"cc\": %d, \"threads\": %d, \"regs\": %d, \"static\": %zu, \"dynamic\": %d, "
                                "\"max_dynamic\": %d, \"carveout\": %d, \"kernel_max_threads\": %d, \"blocks\": %d, "
                                "\"err\": \"%s\"",
                                cc, t, a.numRegs, a.sharedSizeBytes, d, maxdyn, carve, a.maxThreadsPerBlock, blocks,
                                cudaGetErrorName(err));
                    if (carve == -1 && (t == 256 || t == 1024) && (d == maxdyn || d == maxdyn + 1)) {
                        k<<<1, t, d>>>(out, 0);
                        cudaError_t launch = cudaGetLastError();
                        cudaDeviceSynchronize();
                        cudaGetLastError();
                        std::printf(", \"launch\": \"%s\"", cudaGetErrorName(launch));
                    }
                    std::printf("}\n");
                }
            }
        }
    }
}

int main() {
    cudaGetDeviceProperties(&prop, 0);
    cc = prop.major * 10 + prop.minor;
    std::fprintf(stderr,
                 "%s cc %d: threads/SM %d, blocks/SM %d, regs/SM %d, regs/block %d, smem/SM %zu, smem/block %zu, "
                 "optin %zu, reserved %zu, SMs %d\n",
                 prop.name, cc, prop.maxThreadsPerMultiProcessor, prop.maxBlocksPerMultiProcessor,
                 prop.regsPerMultiprocessor, prop.regsPerBlock, prop.sharedMemPerMultiprocessor,
                 prop.sharedMemPerBlock, prop.sharedMemPerBlockOptin, prop.reservedSharedMemPerBlock,
                 prop.multiProcessorCount);
    float *out;
    cudaMalloc(&out, 1024 * sizeof(float));
    probe<1, 0>(out);
    probe<16, 0>(out);
    probe<24, 1000>(out);
    probe<40, 0>(out);
    probe<56, 20000>(out);
    probe<80, 0>(out);
    probe<120, 48000>(out);
    probe<200, 0>(out);
    cudaFree(out);
    return 0;
}
