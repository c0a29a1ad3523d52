"""Resident warps per SM (CU, WGP) and the resource that limits them, from an architecture's published limits."""


def round_up(x, unit):
    return -(-x // unit) * unit


def resident_warps(kernel, arch):
    warps_per_block = -(-kernel.threads_per_block // arch.warp_size)  # a partial warp takes a whole slot
    max_warps = arch.partitions * arch.max_warps_per_partition

    # Blocks each resource allows, in the order a tie is named.
    limits = {}
    limits["warps"] = 0 if kernel.threads_per_block > arch.max_threads_per_block else max_warps // warps_per_block

    # Registers live in each partition's own file (a warp never spans two); a thread's count is rounded up to
    # the allocation granule. The warp slots are the limit above, not this one's business.
    per_partition = arch.registers_per_lane // round_up(kernel.registers_per_thread, arch.register_granule)
    limits["registers"] = arch.partitions * per_partition // warps_per_block

    shared = kernel.shared_bytes_per_block
    if shared > arch.shared_per_block_max:
        limits["shared_memory"] = 0
    else:
        allocated = round_up(shared, arch.shared_granule)  # forgets the 1 KiB the driver keeps per block
        limits["shared_memory"] = arch.shared_per_unit // allocated if allocated else None  # None: no limit

    counted = warps_per_block > 1 or not arch.single_warp_blocks_uncounted  # AMD: a lone wave needs no barrier
    limits["blocks"] = arch.max_blocks if counted else None

    blocks = min(n for n in limits.values() if n is not None)
    limiter = next(name for name, n in limits.items() if n == blocks)
    return blocks * warps_per_block, limiter
