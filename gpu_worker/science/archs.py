"""The architecture table the occupancy calculator reads: one row per GPU architecture.

NVIDIA rows hold what `cudaOccDeviceProp` holds (the `cudaDeviceProp` values of a
representative part) plus the per-architecture constants that `cuda_occupancy.h`
switches on (blocks per SM, allocation granularities, the shared-memory carveouts,
barriers per block slot). The values come from the CUDA toolkit's
`cuda_occupancy.h` (CUDA 13.0) and CCCL's `cuda/__device/arch_traits.h`; where the
two disagree (sm_120's blocks per SM: 24 in the header, 32 in CCCL) the header wins,
since it is what the calculator is checked against.

AMD rows are what-ifs from LLVM's AMDGPU rules (`AMDGPUBaseInfo.cpp`,
`AMDGPUSubtarget.cpp`): no vendor library to compare against, so every result from
them says so. RDNA3 (gfx1100) is modelled as LLVM models it by default: wave32 in
WGP mode, where "per CU" means per workgroup processor (two CUs, four SIMD32s, 128 KiB
of LDS of which one workgroup may address 64 KiB).
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024


@dataclass(frozen=True)
class NvidiaArch:
    """One NVIDIA compute capability, as cuda_occupancy.h sees it."""

    name: str  # "sm_90"
    major: int
    minor: int
    example_gpu: str  # the part num_sms and the marketing name come from
    num_sms: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    shared_mem_per_sm: int  # the largest carveout, bytes
    shared_mem_per_block_optin: int  # bytes; the default per-block limit is shared_mem_per_block
    reserved_shared_mem_per_block: int  # bytes the driver keeps per block (1 KiB from sm_80)
    carveouts_kib: tuple[int, ...]  # the shared-memory sizes an SM can be configured with
    barrier_slots_per_block: int  # barriers available per resident-block slot (sm_90+ limit only)
    regs_per_block: int = 64 * KIB
    regs_per_sm: int = 64 * KIB
    warp_size: int = 32
    shared_mem_per_block: int = 48 * KIB  # without the opt-in; also the static __shared__ limit
    register_allocation_unit: int = 256  # registers per warp are rounded up to this
    max_registers_per_thread: int = 255  # what ptxas can produce (cuda_occupancy.h accepts 256)
    sub_partitions: int = 4
    vendor: str = "nvidia"

    @property
    def cc(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def shared_allocation_unit(self) -> int:
        """Granularity of a block's shared-memory allocation: 256 bytes to sm_7x, 128 from sm_80."""
        return 256 if self.major <= 7 else 128

    @property
    def barrier_limit_applies(self) -> bool:
        """cuda_occupancy.h counts block barriers only from Hopper on."""
        return self.major >= 9

    @property
    def label(self) -> str:
        return f"{self.example_gpu} ({self.name})"


@dataclass(frozen=True)
class AmdArch:
    """One AMD GCN/CDNA target, as LLVM's AMDGPU backend models its occupancy (a what-if here)."""

    name: str  # "gfx942"
    example_gpu: str
    num_cus: int
    wavefront_size: int = 64
    simds_per_cu: int = 4  # LLVM's "EUs per CU"
    max_waves_per_simd: int = 8  # getMaxWavesPerEU: 8 on gfx90a/gfx942, 10 on older gfx9
    total_vgprs: int = 512  # per SIMD lane: the unified VGPR+AGPR file of gfx90a/gfx942
    addressable_vgprs: int = 512
    vgpr_allocation_unit: int = 8  # getVGPRAllocGranule with FeatureGFX90AInsts
    max_sgprs: int = 102  # getAddressableNumSGPRs on gfx8/gfx9
    lds_per_cu: int = 64 * KIB
    lds_allocation_unit: int = 512  # COMPUTE_PGM_RSRC2.LDS_SIZE counts 128-dword blocks on gfx7 to gfx942
    max_workgroup_size: int = 1024
    max_barriers_per_cu: int = 16  # getMaxWorkGroupsPerCU: multi-wave workgroups each hold a barrier (32 in WGP mode)
    lds_per_workgroup: int | None = None  # getAddressableLocalMemorySize where it is less than the CU's (gfx10+)
    sgprs_limit_waves: bool = True  # getOccupancyWithNumSGPRs: only before gfx10, whose SGPRs are not shared
    unit: str = "CU"  # what "per CU" means: the WGP on gfx10+ in WGP mode (getEUsPerCU, getLocalMemorySize)
    vendor: str = "amd"

    @property
    def max_lds_per_workgroup(self) -> int:
        return self.lds_per_cu if self.lds_per_workgroup is None else self.lds_per_workgroup

    @property
    def max_waves_per_cu(self) -> int:
        return self.max_waves_per_simd * self.simds_per_cu

    @property
    def label(self) -> str:
        return f"{self.example_gpu} ({self.name})"


# Carveouts from cudaOccAlignUpShmemSizeVoltaPlus: the sizes a preference is rounded up to.
_VOLTA = (0, 8, 16, 32, 64, 96)
_TURING = (32, 64)
_GA100 = (0, 8, 16, 32, 64, 100, 132, 164)
_GA10X = (0, 8, 16, 32, 64, 100)
_HOPPER = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)

NVIDIA_ARCHS: dict[str, NvidiaArch] = {
    a.name: a
    for a in (
        NvidiaArch("sm_70", 7, 0, "Tesla V100", 80, 1024, 2048, 32, 96 * KIB, 96 * KIB, 0, _VOLTA, 2),
        NvidiaArch("sm_75", 7, 5, "Tesla T4", 40, 1024, 1024, 16, 64 * KIB, 64 * KIB, 0, _TURING, 2),
        NvidiaArch("sm_80", 8, 0, "A100", 108, 1024, 2048, 32, 164 * KIB, 163 * KIB, KIB, _GA100, 2),
        NvidiaArch("sm_86", 8, 6, "A10", 72, 1024, 1536, 16, 100 * KIB, 99 * KIB, KIB, _GA10X, 1),
        NvidiaArch("sm_87", 8, 7, "Jetson AGX Orin", 16, 1024, 1536, 16, 164 * KIB, 163 * KIB, KIB, _GA100, 1),
        NvidiaArch("sm_89", 8, 9, "L40S", 142, 1024, 1536, 24, 100 * KIB, 99 * KIB, KIB, _GA10X, 1),
        NvidiaArch("sm_90", 9, 0, "H100/H200", 132, 1024, 2048, 32, 228 * KIB, 227 * KIB, KIB, _HOPPER, 2),
        NvidiaArch("sm_100", 10, 0, "B200", 148, 1024, 2048, 32, 228 * KIB, 227 * KIB, KIB, _HOPPER, 2),
        NvidiaArch("sm_120", 12, 0, "RTX 5090", 170, 1024, 1536, 24, 100 * KIB, 99 * KIB, KIB, _GA10X, 1),
    )
}

AMD_ARCHS: dict[str, AmdArch] = {
    a.name: a
    for a in (
        AmdArch("gfx942", "AMD Instinct MI300X (CDNA3)", 304),
        AmdArch("gfx90a", "AMD Instinct MI250X GCD (CDNA2)", 110),
        # gfx11 with Feature1_5xVGPRs, wave32: 1536 VGPRs a SIMD lane in granules of 24, 16 waves a SIMD (as
        # gfx10.3), 4 SIMDs and 128 KiB of LDS a WGP, 64 KiB addressable by one workgroup, 32 barriers a WGP.
        AmdArch(
            "gfx1100",
            "AMD Radeon RX 7900 XTX (RDNA3, wave32)",
            48,  # WGPs (96 CUs)
            wavefront_size=32,
            max_waves_per_simd=16,
            total_vgprs=1536,
            addressable_vgprs=256,
            vgpr_allocation_unit=24,
            max_sgprs=106,
            lds_per_cu=128 * KIB,
            lds_per_workgroup=64 * KIB,
            max_barriers_per_cu=32,
            sgprs_limit_waves=False,
            unit="WGP",
        ),
    )
}

Arch = NvidiaArch | AmdArch
ARCHS: dict[str, Arch] = {**NVIDIA_ARCHS, **AMD_ARCHS}
SUPPORTED_ARCHES: list[str] = list(ARCHS)
NVIDIA_ARCHES: list[str] = list(NVIDIA_ARCHS)

_ALIASES = {
    "cdna3": "gfx942",
    "mi300x": "gfx942",
    "cdna2": "gfx90a",
    "mi250x": "gfx90a",
    "rdna3": "gfx1100",
    "rx7900xtx": "gfx1100",
}


def arch_from_cc(cc: tuple[int, int] | str | int) -> str:
    """The arch name of a compute capability: (9, 0), "9.0", "90" or 90 -> "sm_90"."""
    if isinstance(cc, tuple):
        major, minor = cc
    else:
        text = str(cc).strip().lower().removeprefix("sm_").removeprefix("compute_").rstrip("af")
        if "." in text:
            major_s, minor_s = text.split(".", 1)
            major, minor = int(major_s), int(minor_s)
        elif text.isdigit() and len(text) >= 2:
            major, minor = int(text[:-1]), int(text[-1])
        else:
            raise ValueError(f"not a compute capability: {cc!r}")
    name = f"sm_{major}{minor}"
    if name not in NVIDIA_ARCHS:
        raise ValueError(f"compute capability {major}.{minor} is not in the table (known: {', '.join(NVIDIA_ARCHES)})")
    return name


def get_arch(arch: str) -> Arch:
    """The table row of an arch name ("sm_90", "90", "9.0", "sm_90a", "gfx942", "mi300x")."""
    key = arch.strip().lower()
    key = _ALIASES.get(key, key)
    if key in ARCHS:
        return ARCHS[key]
    try:
        return NVIDIA_ARCHS[arch_from_cc(key)]
    except ValueError:
        raise ValueError(f"unknown architecture {arch!r} (known: {', '.join(SUPPORTED_ARCHES)})") from None
