"""The occupancy calculator: how many blocks of a kernel fit on one SM, what limits them, or why none can launch.

NVIDIA architectures follow `cuda_occupancy.h` (CUDA 13.0) rule for rule: warps,
registers (256 per warp granularity, the hardware's check with warps rounded up to
the four sub-partitions), shared memory (the 1 KiB the driver reserves per block from
sm_80, 128- or 256-byte allocation granularity, the carveout the preference rounds up
to), blocks per SM, and block barriers from sm_90. `cuda_occupancy_batch` is that
header in numpy, checked against the real header on 100,000 configurations per
architecture; `occupancy` wraps it for one configuration, adds the launch checks the
header leaves out (the kernel's own block-size limit, 255 registers a thread, 48 KiB of static
shared memory), and says in words what limits the kernel. On an H200 (driver 580) the driver's
cudaOccupancyMaxActiveBlocksPerMultiprocessor gave the same answers on 11,200 configurations,
0 blocks included where the dynamic shared memory is over the kernel's maximum (the launch fails).

By default the calculator assumes the header's default device state (no carveout
preference), which is the largest shared-memory carveout of the SM: results say "at
the largest carveout". Nsight Compute computes its shared-memory limit for the
carveout the driver actually picked, which can be smaller.

AMD targets (gfx942, gfx90a, gfx1100) are what-ifs from LLVM's AMDGPU occupancy rules; their
results are labelled so, and their blocks, warps and SMs mean workgroups, wavefronts
and CUs (on gfx1100, RDNA3 in WGP mode, workgroup processors). Virtual resources
(sm_100+, unused by ordinary kernels) are not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

import numpy as np
from pydantic import BaseModel, Field

from gpu_worker.science.archs import KIB, SUPPORTED_ARCHES, AmdArch, NvidiaArch, arch_from_cc, get_arch

__all__ = [
    "SUPPORTED_ARCHES",
    "OccupancyResult",
    "arch_from_cc",
    "cuda_occupancy_batch",
    "occupancy",
    "occupancy_from_kernel_attrs",
]

INT_MAX = 2**31 - 1
RULES_NVIDIA = "cuda_occupancy.h rules (CUDA 13.0)"
RULES_AMD = "what-if: LLVM AMDGPU occupancy rules, not a vendor calculator"
# cudaOccLimitingFactor bits, and the order a tie is reported in.
FACTOR_BITS = {"warps": 0x01, "registers": 0x02, "shared_memory": 0x04, "blocks": 0x08, "barriers": 0x10}
LimitedBy = Literal["warps", "registers", "shared_memory", "blocks", "barriers", "cannot_launch"]


class OccupancyResult(BaseModel):
    """One configuration's occupancy: the numbers, what limits them, and a plain sentence saying so."""

    arch: str
    vendor: Literal["nvidia", "amd"]
    rules: str
    what_if: bool = False
    threads_per_block: int
    registers_per_thread: int
    shared_bytes_per_block: int  # static + dynamic, as asked (before reservation and rounding)
    launchable: bool
    active_blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    warps_per_block: int
    occupancy: float  # active warps / max warps, 0..1
    limited_by: LimitedBy
    limiting_factors: list[str] = Field(default_factory=list)  # every factor tied at the limit
    limits: dict[str, int | None] = Field(default_factory=dict)  # blocks each factor allows; None: no limit
    allocated_registers_per_block: int = 0
    allocated_shared_bytes_per_block: int = 0
    shared_memory_per_sm_bytes: int = 0  # the carveout the shared-memory limit was computed for
    carveout: str = ""
    reason: str
    notes: list[str] = Field(default_factory=list)


def _roundup(x: np.ndarray, unit: int) -> np.ndarray:
    return -(-x // unit) * unit


def _carveout_size(a: NvidiaArch, size: np.ndarray) -> np.ndarray:
    """cudaOccAlignUpShmemSizeVoltaPlus: the smallest carveout that holds `size` bytes."""
    table = np.array(a.carveouts_kib, dtype=np.int64) * KIB
    idx = np.searchsorted(table, size, side="left")
    return table[np.minimum(idx, len(table) - 1)]


def cuda_occupancy_batch(
    arch: str | NvidiaArch,
    threads_per_block: Any,
    registers_per_thread: Any,
    static_shared_bytes: Any = 0,
    dynamic_shared_bytes: Any = 0,
    *,
    max_dynamic_shared_bytes: Any = None,
    carveout: Any = None,
    block_barriers: Any = 1,
) -> dict[str, np.ndarray]:
    """cudaOccMaxActiveBlocksPerMultiprocessor over arrays, with the header's fields of cudaOccResult.

    The function attributes are those `cudaOccFuncAttributes(cudaFuncAttributes)` builds: the
    opt-in shared-memory limit, `maxDynamicSharedSizeBytes` (default: the opt-in limit less the
    static shared memory), `block_barriers` barriers (the header's conversion uses 1). `carveout`
    is a percentage, or -1/None for no preference. Limits that do not apply are INT_MAX.
    """
    a = get_arch(arch) if isinstance(arch, str) else arch
    if not isinstance(a, NvidiaArch):
        raise ValueError(f"{a.name} is not an NVIDIA architecture")
    t, r, s, d = (
        np.asarray(v, dtype=np.int64)
        for v in (threads_per_block, registers_per_thread, static_shared_bytes, dynamic_shared_bytes)
    )
    if max_dynamic_shared_bytes is None:
        max_dyn = np.maximum(a.shared_mem_per_block_optin - s, 0)
    else:
        max_dyn = np.asarray(max_dynamic_shared_bytes, dtype=np.int64)
    c = np.asarray(-1 if carveout is None else carveout, dtype=np.int64)
    bars = np.asarray(block_barriers, dtype=np.int64)
    t, r, s, d, max_dyn, c, bars = np.broadcast_arrays(t, r, s, d, max_dyn, c, bars)

    warps = -(-t // a.warp_size)
    # Warps: blocks larger than the device's maximum get none.
    limit_warps = np.where(t > a.max_threads_per_block, 0, a.max_warps_per_sm // np.maximum(warps, 1))

    # Registers: per warp, rounded to the allocation unit; the hardware check rounds warps up to sub-partitions.
    reg_warp = _roundup(r * a.warp_size, a.register_allocation_unit)
    reg_block = reg_warp * warps
    reg_assumed = reg_warp * _roundup(warps, a.sub_partitions)
    reg_fail = (reg_assumed > a.regs_per_block) | (reg_block > a.regs_per_block) | (r > 256)
    warps_per_sp = (a.regs_per_sm // a.sub_partitions) // np.maximum(reg_warp, 1)
    limit_regs = np.where(reg_fail, 0, np.where(reg_warp > 0, warps_per_sp * a.sub_partitions // warps, INT_MAX))

    # Shared memory: the driver's reservation, the granularity, the per-block limit, the carveout.
    full = np.int64(a.shared_mem_per_sm)
    preference = _carveout_size(a, np.where(c < 0, full, c * full // 100))
    static_total = s + a.reserved_shared_mem_per_block
    smem_block = _roundup(static_total + d, a.shared_allocation_unit)
    per_block_limit = np.where(
        static_total + max_dyn > a.shared_mem_per_block, a.shared_mem_per_block_optin, a.shared_mem_per_block
    ) + (a.reserved_shared_mem_per_block if a.major >= 8 else 0)
    smem_fail = (d > max_dyn) | (smem_block > per_block_limit)
    smem_sm = np.where(preference >= smem_block, preference, _carveout_size(a, smem_block))
    limit_smem = np.where(smem_fail, 0, np.where(smem_block > 0, smem_sm // np.maximum(smem_block, 1), INT_MAX))

    limit_blocks = np.full_like(t, a.max_blocks_per_sm)
    cta = np.minimum(np.minimum(limit_regs, limit_smem), np.minimum(limit_warps, limit_blocks))
    bits = (
        (limit_warps == cta) * 0x01
        | (limit_regs == cta) * 0x02
        | (limit_smem == cta) * 0x04
        | (limit_blocks == cta) * 0x08
    )
    if a.barrier_limit_applies:
        counted = bars > 0
        limit_bars = np.where(counted, a.max_blocks_per_sm * a.barrier_slots_per_block // np.maximum(bars, 1), INT_MAX)
        cta = np.where(counted, np.minimum(cta, limit_bars), cta)
        bits = bits | (counted & (cta == limit_bars)) * 0x10
    else:
        limit_bars = np.full_like(t, INT_MAX)
    return {
        "active_blocks": cta,
        "limiting_factors": bits,
        "limit_warps": limit_warps,
        "limit_registers": limit_regs,
        "limit_shared_memory": limit_smem,
        "limit_blocks": limit_blocks,
        "limit_barriers": limit_bars,
        "allocated_registers_per_block": reg_block,
        "allocated_shared_bytes_per_block": smem_block,
        "shared_memory_per_sm": smem_sm,
        "warps_per_block": warps,
    }


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, not {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return int(value)


def _kib(n: int) -> str:
    return f"{n // KIB} KiB" if n % KIB == 0 else f"{n:,} bytes"


def occupancy(
    arch: str,
    threads_per_block: int,
    registers_per_thread: int,
    static_shared_bytes: int = 0,
    dynamic_shared_bytes: int = 0,
    *,
    max_dynamic_shared_bytes: int | None = None,
    carveout: int | None = None,
    max_threads_per_block: int | None = None,
    block_barriers: int = 1,
    sgprs_per_wave: int | None = None,
) -> OccupancyResult:
    """Occupancy of one launch configuration on one architecture.

    `max_dynamic_shared_bytes` is the kernel's `cudaFuncAttributeMaxDynamicSharedMemorySize`
    (None: opted in to the most the architecture allows); `max_threads_per_block` the kernel's
    own limit (from `__launch_bounds__`); `carveout` a shared-memory carveout preference in
    percent (None: none, i.e. the largest carveout). On AMD targets `registers_per_thread` is the
    wavefront's VGPRs (architectural plus accumulation), shared memory is LDS, and
    `sgprs_per_wave` may be given.
    """
    a = get_arch(arch)
    threads = _check_int("threads_per_block", threads_per_block, 1)
    regs = _check_int("registers_per_thread", registers_per_thread, 0)
    static = _check_int("static_shared_bytes", static_shared_bytes, 0)
    dynamic = _check_int("dynamic_shared_bytes", dynamic_shared_bytes, 0)
    max_dyn = (
        None
        if max_dynamic_shared_bytes is None
        else _check_int("max_dynamic_shared_bytes", max_dynamic_shared_bytes, 0)
    )
    kernel_max = (
        None if max_threads_per_block is None else _check_int("max_threads_per_block", max_threads_per_block, 1)
    )
    if isinstance(a, AmdArch):
        sgprs = None if sgprs_per_wave is None else _check_int("sgprs_per_wave", sgprs_per_wave, 0)
        return _amd_occupancy(a, threads, regs, static + dynamic, sgprs, kernel_max, carveout)
    if carveout == -1:
        carveout = None
    if carveout is not None and not 0 <= _check_int("carveout", carveout, 0) <= 100:
        raise ValueError(f"carveout is a percentage of the SM's shared memory (0 to 100), not {carveout}")
    barriers = _check_int("block_barriers", block_barriers, 0)
    batch = cuda_occupancy_batch(
        a, threads, regs, static, dynamic, max_dynamic_shared_bytes=max_dyn, carveout=carveout, block_barriers=barriers
    )
    raw = {k: int(v) for k, v in batch.items()}
    warps, smem_sm, active = raw["warps_per_block"], raw["shared_memory_per_sm"], raw["active_blocks"]
    limits = {f: (None if raw[f"limit_{f}"] >= INT_MAX else raw[f"limit_{f}"]) for f in FACTOR_BITS}
    at = "at the largest carveout" if carveout is None else f"at a carveout preference of {carveout}%"
    carve = f"{at} ({_kib(smem_sm)} of shared memory per SM)"
    notes = [f"Shared-memory limit computed {carve}; Nsight Compute uses the carveout the driver picked."]
    common: dict[str, Any] = dict(
        arch=a.name,
        vendor="nvidia",
        rules=RULES_NVIDIA,
        threads_per_block=threads,
        registers_per_thread=regs,
        shared_bytes_per_block=static + dynamic,
        max_warps_per_sm=a.max_warps_per_sm,
        warps_per_block=warps,
        limits=limits,
        allocated_registers_per_block=raw["allocated_registers_per_block"],
        allocated_shared_bytes_per_block=raw["allocated_shared_bytes_per_block"],
        shared_memory_per_sm_bytes=smem_sm,
        carveout=carve,
    )

    why = []
    if threads > a.max_threads_per_block:
        why.append(f"a block of {threads} threads is over the {a.max_threads_per_block}-thread limit of {a.name}")
    if kernel_max is not None and threads > kernel_max:
        why.append(
            f"a block of {threads} threads is over this kernel's maximum of {kernel_max} (its __launch_bounds__"
            " or register use)"
        )
    if regs > a.max_registers_per_thread:
        why.append(f"{regs} registers per thread is over the limit of {a.max_registers_per_thread}")
    elif limits["registers"] == 0:
        why.append(
            f"{regs} registers per thread is {raw['allocated_registers_per_block'] // warps:,} per warp, so "
            f"{threads} threads need {raw['allocated_registers_per_block']:,} registers (counted over warps "
            f"rounded up to {a.sub_partitions} sub-partitions), over the {a.regs_per_block:,} a block may have"
        )
    if static > a.shared_mem_per_block:
        why.append(
            f"{static:,} bytes of static shared memory is over the {_kib(a.shared_mem_per_block)} a kernel may "
            "declare statically (the compiler refuses it; use dynamic shared memory)"
        )
    most = max(a.shared_mem_per_block_optin - static, 0)
    if max_dyn is not None and dynamic > max_dyn:
        why.append(
            f"the launch would fail, because {dynamic:,} bytes of dynamic shared memory is over the kernel's "
            f"maximum of {max_dyn:,} (cudaFuncAttributeMaxDynamicSharedMemorySize; cudaFuncSetAttribute may raise "
            f"it to {most:,})"
        )
    if static + dynamic > a.shared_mem_per_block_optin:
        why.append(
            f"the block asks for {static + dynamic:,} bytes of shared memory, over the "
            f"{a.shared_mem_per_block_optin:,} ({_kib(a.shared_mem_per_block_optin)}) a block may opt in to on {a.name}"
        )
    if why:
        if active > 0:
            notes.append(f"cuda_occupancy.h would still answer {active} block{'s' if active != 1 else ''} per SM here.")
        raised = int(cuda_occupancy_batch(a, threads, regs, static, dynamic, carveout=carveout)["active_blocks"])
        if max_dyn is not None and dynamic > max_dyn and raised > 0:
            # Seen on an H200 (driver 580): the driver's occupancy query answers 0 here too, and the launch fails.
            notes.append(
                "cudaOccupancyMaxActiveBlocksPerMultiprocessor answers 0 here as well; with the kernel's maximum "
                f"raised to {dynamic:,} bytes it would be {raised} block{'s' if raised != 1 else ''} per SM."
            )
        return _cannot_launch(common, "It cannot launch: " + "; ".join(why) + ".", notes)

    tied = [f for f, n in limits.items() if n == active]
    s = "s" if active != 1 else ""
    reserved = f"with the {_kib(a.reserved_shared_mem_per_block)} the driver reserves, " if a.major >= 8 else ""
    phrase = {
        "warps": f"warps: {a.max_warps_per_sm} warp slots per SM hold {active} block{s} of {warps} warps",
        "registers": f"registers: {regs} per thread is {raw['allocated_registers_per_block'] // warps:,} per warp "
        f"(rounded up to {a.register_allocation_unit}), so the {a.regs_per_sm:,}-register file holds {active} block{s}",
        "shared_memory": f"shared memory: {raw['allocated_shared_bytes_per_block']:,} bytes per block ({reserved}"
        f"rounded to {a.shared_allocation_unit}) against {smem_sm:,} per SM {at}",
        "blocks": f"the limit of {a.max_blocks_per_sm} resident blocks per SM",
        "barriers": f"block barriers: {barriers} per block against {a.max_blocks_per_sm * a.barrier_slots_per_block}"
        " per SM",
    }[tied[0]]
    occ = active * warps / a.max_warps_per_sm
    reason = (
        f"{active} block{s} of {threads} threads ({warps} warp{'s' if warps != 1 else ''} each) fit on an SM of "
        f"{a.name}: {active * warps} of {a.max_warps_per_sm} warps, {occ:.0%} occupancy, limited by {phrase}."
    )
    if threads % a.warp_size:
        notes.append(
            f"{threads} threads is not a multiple of {a.warp_size}: the last warp is partly idle but takes a "
            "whole warp's slot and registers."
        )
    return _launched(common, active, tied, reason, notes)


def _cannot_launch(common: dict[str, Any], reason: str, notes: list[str]) -> OccupancyResult:
    return OccupancyResult(
        **common,
        launchable=False,
        active_blocks_per_sm=0,
        active_warps_per_sm=0,
        occupancy=0.0,
        limited_by="cannot_launch",
        reason=reason,
        notes=notes,
    )


def _launched(common: dict[str, Any], active: int, tied: list[str], reason: str, notes: list[str]) -> OccupancyResult:
    warps = active * common["warps_per_block"]
    return OccupancyResult(
        **common,
        launchable=True,
        active_blocks_per_sm=active,
        active_warps_per_sm=warps,
        occupancy=warps / common["max_warps_per_sm"],
        limited_by=cast(LimitedBy, tied[0]),
        limiting_factors=tied,
        reason=reason,
        notes=notes,
    )


_ATTR_NAMES = {
    "registers": ("registers", "registers_per_thread", "num_regs", "numRegs"),
    "static_shared": ("static_shared_bytes", "shared_size_bytes", "sharedSizeBytes", "static_shared", "shared_bytes"),
    "max_dynamic": ("max_dynamic_shared_bytes", "max_dynamic_shared_size_bytes", "maxDynamicSharedSizeBytes"),
    "max_threads": ("max_threads_per_block", "maxThreadsPerBlock"),
    "carveout": ("carveout", "preferred_shared_memory_carveout", "preferredShmemCarveout"),
    "barriers": ("block_barriers", "barriers", "num_barriers"),
}


def _attr(attrs: Any, key: str) -> int | None:
    for name in _ATTR_NAMES[key]:
        value = attrs.get(name) if isinstance(attrs, Mapping) else getattr(attrs, name, None)
        if value is not None:
            return int(value)
    return None


def occupancy_from_kernel_attrs(
    arch: str, block: int | tuple[int, ...], attrs: Mapping[str, Any] | Any, dynamic_shared_bytes: int = 0
) -> OccupancyResult:
    """Occupancy of a compiled kernel from its attributes (CuPy's `RawKernel.attributes`, a
    `cudaFuncAttributes`-like object, or the worker's `compiled` event): registers, static shared
    memory, maximum dynamic shared memory and maximum threads per block; a block barrier count
    and a carveout preference where given."""
    threads = int(np.prod(block)) if isinstance(block, tuple | list) else int(block)
    regs = _attr(attrs, "registers")
    if regs is None:
        raise ValueError("the kernel attributes carry no register count")
    carveout, barriers = _attr(attrs, "carveout"), _attr(attrs, "barriers")
    return occupancy(
        arch,
        threads,
        regs,
        _attr(attrs, "static_shared") or 0,
        dynamic_shared_bytes,
        max_dynamic_shared_bytes=_attr(attrs, "max_dynamic"),
        max_threads_per_block=_attr(attrs, "max_threads"),
        carveout=None if carveout is None or carveout < 0 else carveout,
        block_barriers=1 if barriers is None else barriers,
    )


def _amd_occupancy(
    a: AmdArch, threads: int, vgprs: int, lds: int, sgprs: int | None, kernel_max: int | None, carveout: int | None
) -> OccupancyResult:
    """Workgroups per CU on a GCN/CDNA target, from LLVM's AMDGPU rules (a what-if, labelled so)."""
    waves = -(-threads // a.wavefront_size)
    # getNumWavesPerEUWithNumVGPRs: VGPRs round up to the granule; the file holds total // rounded waves per SIMD.
    unit = a.vgpr_allocation_unit
    vgpr_waves = a.max_waves_per_simd if vgprs < unit else max(a.total_vgprs // (-(-vgprs // unit) * unit), 1)
    # getOccupancyWithNumSGPRs for gfx8/gfx9; from gfx10 each wave has its own SGPRs and they limit nothing.
    sgpr_waves = 10 if sgprs is None or sgprs <= 80 else 9 if sgprs <= 88 else 8 if sgprs <= 100 else 7
    sgpr_waves = sgpr_waves if a.sgprs_limit_waves else a.max_waves_per_simd
    simd_waves = min(vgpr_waves, sgpr_waves, a.max_waves_per_simd)
    lds_alloc = -(-lds // a.lds_allocation_unit) * a.lds_allocation_unit
    limits: dict[str, int | None] = {
        "warps": 0 if threads > a.max_workgroup_size else a.max_waves_per_cu // waves,
        "registers": a.simds_per_cu * simd_waves // waves,
        "shared_memory": 0 if lds > a.max_lds_per_workgroup else (a.lds_per_cu // lds_alloc) if lds_alloc else None,
        "blocks": None,
        "barriers": a.max_barriers_per_cu if waves > 1 else None,  # single-wave workgroups need no barrier
    }
    why = []
    if threads > a.max_workgroup_size:
        why.append(f"a workgroup of {threads} work-items is over the limit of {a.max_workgroup_size}")
    if kernel_max is not None and threads > kernel_max:
        why.append(f"a workgroup of {threads} work-items is over this kernel's maximum of {kernel_max}")
    if vgprs > a.addressable_vgprs:
        why.append(f"{vgprs} VGPRs is over the {a.addressable_vgprs} a wavefront can address")
    elif limits["registers"] == 0:
        why.append(
            f"a workgroup of {waves} wavefronts puts {-(-waves // a.simds_per_cu)} on one SIMD, but {vgprs} "
            f"VGPRs{f' and {sgprs} SGPRs' if sgprs is not None else ''} allow only {simd_waves}"
        )
    if sgprs is not None and sgprs > a.max_sgprs:
        why.append(f"{sgprs} SGPRs is over the {a.max_sgprs} a wavefront can address")
    if lds > a.max_lds_per_workgroup:
        where = f"of a {a.unit}" if a.lds_per_workgroup is None else "a workgroup may address"
        why.append(f"{lds:,} bytes of LDS is over the {_kib(a.max_lds_per_workgroup)} {where}")
    # LLVM's own estimate (getOccupancyWithWorkGroupSizes for one size, then the register limits), in waves per SIMD.
    slots = a.max_waves_per_cu if waves == 1 else min(a.max_waves_per_cu // waves, a.max_barriers_per_cu)
    wgs_llvm = min(slots, a.lds_per_cu // max(lds, 1))
    llvm = min(max(min(-(-wgs_llvm * waves // a.simds_per_cu), a.max_waves_per_simd), 1), simd_waves)
    notes = [
        f"What-if for {a.label} from LLVM's AMDGPU rules: blocks are workgroups, warps are {a.wavefront_size}-wide "
        f"wavefronts, an SM is a {a.unit} of {a.simds_per_cu} SIMDs with {a.max_waves_per_simd} wavefront slots each.",
        f"LLVM's compile-time occupancy for this kernel would be {llvm} waves per SIMD.",
    ]
    if carveout not in (None, -1):
        notes.append("A CU's LDS has no carveout to choose: the carveout was ignored.")
    common: dict[str, Any] = dict(
        arch=a.name,
        vendor="amd",
        rules=RULES_AMD,
        what_if=True,
        threads_per_block=threads,
        registers_per_thread=vgprs,
        shared_bytes_per_block=lds,
        max_warps_per_sm=a.max_waves_per_cu,
        warps_per_block=waves,
        limits=limits,
        allocated_shared_bytes_per_block=lds_alloc,
        shared_memory_per_sm_bytes=a.lds_per_cu,
        carveout="no carveout (LDS is fixed)",
    )
    if why:
        return _cannot_launch(common, "It cannot launch (what-if): " + "; ".join(why) + ".", notes)
    active = min(n for n in limits.values() if n is not None)
    tied = [f for f, n in limits.items() if n == active]
    phrase = {
        "warps": f"wavefront slots: {a.max_waves_per_cu} per {a.unit} hold {active} workgroups of {waves}",
        "registers": f"registers: {vgprs} VGPRs (rounded up to {unit}) leave room for {simd_waves} wavefronts per SIMD",
        "shared_memory": f"LDS: {lds_alloc:,} bytes per workgroup (rounded to {a.lds_allocation_unit}) against "
        f"{_kib(a.lds_per_cu)} per {a.unit}",
        "barriers": f"barriers: at most {a.max_barriers_per_cu} multi-wavefront workgroups per {a.unit}",
    }[tied[0]]
    reason = (
        f"What-if: {active} workgroups of {threads} work-items ({waves} wavefronts each) fit on a {a.unit} of "
        f"{a.name}: "
        f"{active * waves} of {a.max_waves_per_cu} wavefronts, {active * waves / a.max_waves_per_cu:.0%} occupancy, "
        f"limited by {phrase}."
    )
    return _launched(common, active, tied, reason, notes)


def resident_warps(occupancy: Mapping[str, Any] | None) -> float | None:
    """Warps per SM the driver keeps resident, from the cuda backend's per-size occupancy; None if not measured."""
    blocks, threads = (occupancy or {}).get("driver_blocks_per_sm"), (occupancy or {}).get("threads_per_block")
    if blocks is None or not threads:
        return None
    return float(int(blocks) * -(-int(threads) // 32))
