"""The same rules written as one function per resource; where two resources tie, it names the last of them."""

UNLIMITED = 10**9


def by_warps(kernel, arch, per_block):
    if kernel.threads_per_block > arch.max_threads_per_block:
        return 0
    return arch.partitions * arch.max_warps_per_partition // per_block


def by_registers(kernel, arch, per_block):
    granule = arch.register_granule
    rounded = (kernel.registers_per_thread + granule - 1) // granule * granule
    per_partition = arch.registers_per_lane // rounded
    return arch.partitions * per_partition // per_block


def by_shared_memory(kernel, arch, per_block):
    if kernel.shared_bytes_per_block > arch.shared_per_block_max:
        return 0
    granule = arch.shared_granule
    asked = kernel.shared_bytes_per_block + arch.shared_reserved_per_block
    allocated = (asked + granule - 1) // granule * granule
    return arch.shared_per_unit // allocated if allocated else UNLIMITED


def by_blocks(kernel, arch, per_block):
    return UNLIMITED if per_block == 1 and arch.single_warp_blocks_uncounted else arch.max_blocks


def resident_warps(kernel, arch):
    per_block = (kernel.threads_per_block + arch.warp_size - 1) // arch.warp_size
    found = [
        (f(kernel, arch, per_block), name)
        for f, name in (
            (by_warps, "warps"),
            (by_registers, "registers"),
            (by_shared_memory, "shared_memory"),
            (by_blocks, "blocks"),
        )
    ]
    blocks = min(n for n, _ in found)
    return blocks * per_block, [name for n, name in found if n == blocks][-1]
