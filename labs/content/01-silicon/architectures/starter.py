"""Resident warps per SM (CU, WGP): so far only the warp slots are counted, as if 32 lanes and nothing else mattered."""


def resident_warps(kernel, arch):
    # kernel: .threads_per_block, .registers_per_thread, .shared_bytes_per_block
    # arch (one record for every chip; see the README's table):
    #   .name, .label, .vendor ("nvidia" or "amd"), .unit ("SM", "CU" or "WGP")
    #   .warp_size (32, or 64 on CDNA3)            .partitions (sub-partitions or SIMDs per unit)
    #   .max_warps_per_partition                   .max_threads_per_block
    #   .registers_per_lane (one lane's share of a partition's register file, in 32-bit registers)
    #   .register_granule (a thread's registers are allocated in multiples of this)
    #   .shared_per_unit, .shared_per_block_max, .shared_reserved_per_block, .shared_granule (bytes)
    #   .max_blocks, .single_warp_blocks_uncounted (True on AMD: a one-wave workgroup holds no barrier)
    # Return (resident warps or wavefronts per unit, limiter), the limiter one of
    # "warps", "registers", "shared_memory", "blocks"; a kernel that cannot launch: (0, what forbids it).
    warps_per_block = -(-kernel.threads_per_block // 32)  # TODO: not every chip's warp is 32 lanes wide
    blocks = 64 // warps_per_block  # TODO: registers, shared memory and the block limit are missing
    return blocks * warps_per_block, "warps"
