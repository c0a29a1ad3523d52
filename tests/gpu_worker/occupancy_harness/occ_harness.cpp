// Runs the CUDA toolkit's own occupancy calculator (cuda_occupancy.h, header-only, no GPU) on
// configurations read from stdin, so WarpLab's Python calculator can be compared with it.
//
//   occ_harness ARCH            binary: int32 records of 7 fields in, int32 records of 9 fields out
//   occ_harness ARCH --text     the same, one whitespace-separated record per line
//
// In:  threads, registers, static_shared, dynamic_shared, max_dynamic_shared, carveout (-1: none), barriers
// Out: status, activeBlocksPerMultiprocessor, limitingFactors, blockLimitRegs, blockLimitSharedMem,
//      blockLimitWarps, blockLimitBlocks, blockLimitBarriers, allocatedSharedMemPerBlock
//
// The device properties are typed in here by hand per architecture (the cudaDeviceProp values
// of a representative part), independently of gpu_worker/archs.py, so the table is checked too.
// The header is included from the installed toolkit (-I$CUDA_HOME/include), never copied.
#include <cuda_occupancy.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

struct ArchRow {
    const char *name;
    int major, minor, threadsPerSm, numSms;
    size_t smemPerSm, smemOptin, reserved;
};

const ArchRow kArchs[] = {
    {"sm_70", 7, 0, 2048, 80, 96 * 1024, 96 * 1024, 0},
    {"sm_75", 7, 5, 1024, 40, 64 * 1024, 64 * 1024, 0},
    {"sm_80", 8, 0, 2048, 108, 164 * 1024, 163 * 1024, 1024},
    {"sm_86", 8, 6, 1536, 72, 100 * 1024, 99 * 1024, 1024},
    {"sm_87", 8, 7, 1536, 16, 164 * 1024, 163 * 1024, 1024},
    {"sm_89", 8, 9, 1536, 142, 100 * 1024, 99 * 1024, 1024},
    {"sm_90", 9, 0, 2048, 132, 228 * 1024, 227 * 1024, 1024},
    {"sm_100", 10, 0, 2048, 148, 228 * 1024, 227 * 1024, 1024},
    {"sm_120", 12, 0, 1536, 170, 100 * 1024, 99 * 1024, 1024},
};

bool makeProps(const char *name, cudaOccDeviceProp *p) {
    for (const ArchRow &a : kArchs) {
        if (std::strcmp(a.name, name) != 0) continue;
        p->computeMajor = a.major;
        p->computeMinor = a.minor;
        p->maxThreadsPerBlock = 1024;
        p->maxThreadsPerMultiprocessor = a.threadsPerSm;
        p->regsPerBlock = 65536;
        p->regsPerMultiprocessor = 65536;
        p->warpSize = 32;
        p->sharedMemPerBlock = 48 * 1024;
        p->sharedMemPerMultiprocessor = a.smemPerSm;
        p->numSms = a.numSms;
        p->sharedMemPerBlockOptin = a.smemOptin;
        p->reservedSharedMemPerBlock = a.reserved;
        return true;
    }
    return false;
}

void run(const cudaOccDeviceProp &prop, const int32_t in[7], int32_t out[9]) {
    cudaOccFuncAttributes attr;  // the fields cudaOccFuncAttributes(cudaFuncAttributes) sets
    attr.maxThreadsPerBlock = 1024;
    attr.numRegs = in[1];
    attr.sharedSizeBytes = (size_t)in[2];
    attr.partitionedGCConfig = PARTITIONED_GC_OFF;
    attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    attr.maxDynamicSharedSizeBytes = (size_t)in[4];
    attr.numBlockBarriers = in[6];
    attr.virtualResourceCount = 0;
    cudaOccDeviceState state;
    state.carveoutConfig = in[5];
    cudaOccResult r;
    std::memset(&r, 0, sizeof r);
    cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &prop, &attr, &state, in[0], (size_t)in[3]);
    out[0] = (int32_t)status;
    out[1] = r.activeBlocksPerMultiprocessor;
    out[2] = (int32_t)r.limitingFactors;
    out[3] = r.blockLimitRegs;
    out[4] = r.blockLimitSharedMem;
    out[5] = r.blockLimitWarps;
    out[6] = r.blockLimitBlocks;
    out[7] = r.blockLimitBarriers;
    out[8] = (int32_t)r.allocatedSharedMemPerBlock;
}

}  // namespace

int main(int argc, char **argv) {
    cudaOccDeviceProp prop;
    if (argc < 2 || !makeProps(argv[1], &prop)) {
        std::fprintf(stderr, "usage: occ_harness ARCH [--text]   (ARCH: sm_70 ... sm_120)\n");
        return 2;
    }
    int32_t in[7], out[9];
    if (argc > 2 && std::strcmp(argv[2], "--text") == 0) {
        while (std::scanf("%d %d %d %d %d %d %d", &in[0], &in[1], &in[2], &in[3], &in[4], &in[5], &in[6]) == 7) {
            run(prop, in, out);
            std::printf("%d %d %d %d %d %d %d %d %d\n", out[0], out[1], out[2], out[3], out[4], out[5], out[6],
                        out[7], out[8]);
        }
        return 0;
    }
    std::vector<int32_t> buf(7 * 65536), res(9 * 65536);
    size_t n;
    while ((n = std::fread(buf.data(), sizeof(int32_t) * 7, 65536, stdin)) > 0) {
        for (size_t i = 0; i < n; ++i) run(prop, &buf[7 * i], &res[9 * i]);
        std::fwrite(res.data(), sizeof(int32_t) * 9, n, stdout);
    }
    return 0;
}
