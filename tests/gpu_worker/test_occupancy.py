"""The occupancy calculator on configurations worked out by hand from cuda_occupancy.h and LLVM's AMDGPU rules."""

from __future__ import annotations

import pytest

from gpu_worker.science.archs import NVIDIA_ARCHES, SUPPORTED_ARCHES, arch_from_cc, get_arch
from gpu_worker.science.occupancy import occupancy, occupancy_from_kernel_attrs


def test_a_256_thread_block_with_32_registers_fills_an_sm_90() -> None:
    r = occupancy("sm_90", 256, 32)
    assert r.launchable
    assert (r.active_blocks_per_sm, r.active_warps_per_sm, r.max_warps_per_sm) == (8, 64, 64)
    assert r.occupancy == 1.0
    assert r.limited_by == "warps"
    assert r.limiting_factors == ["warps", "registers"]  # 32 x 32 = 1024 registers a warp: 16 warps a sub-partition


def test_64_registers_per_thread_halve_the_occupancy_of_an_sm_90() -> None:
    r = occupancy("sm_90", 256, 64)  # 2048 registers a warp: 8 warps per 16,384-register sub-partition
    assert (r.active_blocks_per_sm, r.occupancy, r.limited_by) == (4, 0.5, "registers")
    assert "registers" in r.reason


def test_registers_are_allocated_to_warps_in_units_of_256() -> None:
    r33, r40 = occupancy("sm_90", 256, 33), occupancy("sm_90", 256, 40)
    assert r33.allocated_registers_per_block == r40.allocated_registers_per_block == 1280 * 8
    assert r33.active_blocks_per_sm == r40.active_blocks_per_sm == 6  # 12 warps a sub-partition, 48 an SM


def test_the_limits_say_how_many_blocks_each_factor_allows() -> None:
    r = occupancy("sm_90", 256, 32)
    assert r.limits == {"warps": 8, "registers": 8, "shared_memory": 228, "blocks": 32, "barriers": 64}


def test_a_kernel_without_registers_or_shared_memory_on_sm_70_is_limited_by_warps_and_blocks_only() -> None:
    r = occupancy("sm_70", 32, 0)
    assert r.limits["registers"] is None and r.limits["shared_memory"] is None  # sm_70 reserves nothing per block
    assert (r.active_blocks_per_sm, r.limited_by) == (32, "blocks")
    assert r.occupancy == 0.5


def test_turing_holds_32_warps_and_16_blocks() -> None:
    assert occupancy("sm_75", 1024, 32).occupancy == 1.0
    r = occupancy("sm_75", 32, 32)
    assert (r.active_blocks_per_sm, r.occupancy, r.limited_by) == (16, 0.5, "blocks")


def test_a_block_that_is_not_a_multiple_of_32_threads_still_takes_whole_warps() -> None:
    r = occupancy("sm_90", 33, 32)
    assert r.warps_per_block == 2
    assert r.active_blocks_per_sm == 32 and r.active_warps_per_sm == 64
    assert any("not a multiple of 32" in n for n in r.notes)


def test_a_1024_thread_block_with_72_registers_cannot_launch_anywhere() -> None:
    for arch in NVIDIA_ARCHES:
        r = occupancy(arch, 1024, 72)  # 2304 registers a warp x 32 warps = 73,728 > 65,536
        assert not r.launchable and r.limited_by == "cannot_launch" and r.active_blocks_per_sm == 0
        assert "65,536" in r.reason


def test_a_block_over_1024_threads_cannot_launch() -> None:
    r = occupancy("sm_90", 1025, 16)
    assert not r.launchable
    assert "1024-thread limit" in r.reason


def test_a_block_over_the_kernels_own_maximum_cannot_launch() -> None:
    r = occupancy("sm_90", 512, 16, max_threads_per_block=256)
    assert not r.launchable and "this kernel's maximum of 256" in r.reason
    assert any("cuda_occupancy.h would still answer 4 blocks" in n for n in r.notes)


def test_256_registers_per_thread_cannot_launch_though_cuda_occupancy_h_accepts_them() -> None:
    r = occupancy("sm_90", 32, 256)
    assert not r.launchable and "over the limit of 255" in r.reason
    assert any("would still answer" in n for n in r.notes)


def test_the_driver_reserves_1_kib_of_shared_memory_per_block_from_sm_80() -> None:
    assert occupancy("sm_80", 64, 16, 0, 40 * 1024).active_blocks_per_sm == 4  # 4 x 41 KiB = 164 KiB exactly
    assert occupancy("sm_80", 64, 16, 0, 40 * 1024 + 1).active_blocks_per_sm == 3  # 41 KiB + 128 B no longer fits 4
    assert occupancy("sm_70", 64, 16, 0, 48 * 1024).active_blocks_per_sm == 2  # 96 KiB, nothing reserved


def test_shared_memory_is_allocated_in_128_bytes_from_sm_80_and_256_before() -> None:
    assert occupancy("sm_80", 64, 16, 0, 1).allocated_shared_bytes_per_block == 1024 + 128
    assert occupancy("sm_70", 64, 16, 0, 1).allocated_shared_bytes_per_block == 256


def test_one_block_may_take_all_of_the_opt_in_shared_memory_but_not_a_byte_more() -> None:
    r = occupancy("sm_90", 256, 32, 0, 227 * 1024)
    assert (r.active_blocks_per_sm, r.limited_by) == (1, "shared_memory")
    over = occupancy("sm_90", 256, 32, 0, 227 * 1024 + 1)
    assert not over.launchable and "a block may opt in to" in over.reason


def test_it_says_a_launch_would_fail_when_dynamic_shared_exceeds_the_kernel_maximum() -> None:
    r = occupancy("sm_90", 256, 32, 0, 64 * 1024, max_dynamic_shared_bytes=48 * 1024)
    assert not r.launchable and r.active_blocks_per_sm == 0
    assert "launch would fail" in r.reason and "cudaFuncSetAttribute" in r.reason
    # The driver answers 0 too (seen on an H200); raised to 64 KiB, 65 KiB a block in 228 KiB would give 3.
    assert any("answers 0 here as well" in n and "it would be 3 blocks" in n for n in r.notes)


def test_static_shared_memory_over_48_kib_does_not_compile() -> None:
    r = occupancy("sm_90", 128, 32, static_shared_bytes=49 * 1024)
    assert not r.launchable and "statically" in r.reason


def test_the_calculator_assumes_the_largest_carveout_unless_told() -> None:
    r = occupancy("sm_80", 256, 32, 0, 20 * 1024)  # 21 KiB a block
    assert r.shared_memory_per_sm_bytes == 164 * 1024 and "at the largest carveout" in r.carveout
    assert (r.active_blocks_per_sm, r.limited_by) == (7, "shared_memory")
    half = occupancy("sm_80", 256, 32, 0, 20 * 1024, carveout=50)  # 82 KiB rounds up to the 100 KiB carveout
    assert half.shared_memory_per_sm_bytes == 100 * 1024 and half.active_blocks_per_sm == 4
    none = occupancy("sm_80", 256, 32, 0, 20 * 1024, carveout=0)  # raised to the 32 KiB one block needs
    assert none.shared_memory_per_sm_bytes == 32 * 1024 and none.active_blocks_per_sm == 1


def test_a_carveout_is_a_percentage() -> None:
    with pytest.raises(ValueError, match="percentage"):
        occupancy("sm_90", 256, 32, carveout=101)


def test_block_barriers_limit_hopper_and_later_but_not_ampere() -> None:
    r = occupancy("sm_120", 64, 16, block_barriers=2)  # 24 block slots, one barrier each
    assert (r.active_blocks_per_sm, r.limited_by) == (12, "barriers")
    assert occupancy("sm_86", 64, 16, block_barriers=2).active_blocks_per_sm == 16


def test_it_rejects_input_that_is_not_a_configuration() -> None:
    with pytest.raises(ValueError, match="unknown architecture"):
        occupancy("sm_99", 256, 32)
    with pytest.raises(ValueError, match="at least 1"):
        occupancy("sm_90", 0, 32)
    with pytest.raises(ValueError, match="integer"):
        occupancy("sm_90", 256.0, 32)  # type: ignore[arg-type]


def test_arch_from_cc_names_the_architecture() -> None:
    assert arch_from_cc((9, 0)) == "sm_90"
    assert arch_from_cc("8.6") == "sm_86"
    assert arch_from_cc(120) == "sm_120"
    assert get_arch("sm_90a").name == "sm_90"
    with pytest.raises(ValueError):
        arch_from_cc((7, 2))


def test_the_supported_arches_cover_volta_to_blackwell_and_cdna3() -> None:
    for arch in ("sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942"):
        assert arch in SUPPORTED_ARCHES


def test_occupancy_from_kernel_attrs_reads_cupys_attributes() -> None:
    attrs = {
        "num_regs": 40,
        "shared_size_bytes": 4096,
        "max_dynamic_shared_size_bytes": 45056,
        "max_threads_per_block": 1024,
        "preferred_shared_memory_carveout": -1,
    }
    r = occupancy_from_kernel_attrs("sm_90", (16, 16), attrs)
    assert (r.threads_per_block, r.active_blocks_per_sm, r.limited_by) == (256, 6, "registers")
    too_big = occupancy_from_kernel_attrs("sm_90", 256, attrs, dynamic_shared_bytes=48 * 1024)
    assert not too_big.launchable and "launch would fail" in too_big.reason


def test_occupancy_from_kernel_attrs_respects_the_kernels_block_limit() -> None:
    r = occupancy_from_kernel_attrs("sm_90", 512, {"registers": 32, "max_threads_per_block": 256})
    assert not r.launchable


def test_a_256_work_item_workgroup_with_128_vgprs_half_fills_an_mi300x_cu() -> None:
    r = occupancy("gfx942", 256, 128)  # 512 / 128 = 4 waves a SIMD, 16 a CU: 4 workgroups of 4
    assert (r.active_blocks_per_sm, r.active_warps_per_sm, r.max_warps_per_sm) == (4, 16, 32)
    assert (r.occupancy, r.limited_by) == (0.5, "registers")


def test_mi300x_runs_8_waves_per_simd_at_56_vgprs_as_llvm_reports() -> None:
    r = occupancy("gfx942", 256, 56)  # LLVM's agpr-register-count.ll: 56 VGPRs on gfx90a, "Occupancy: 8"
    assert r.occupancy == 1.0
    assert any("8 waves per SIMD" in n for n in r.notes)


def test_mi300x_allocates_vgprs_in_granules_of_8() -> None:
    r = occupancy("gfx942", 64, 65)  # 72 VGPRs: 512 // 72 = 7 waves a SIMD, 28 single-wave workgroups
    assert (r.active_blocks_per_sm, r.occupancy, r.limited_by) == (28, 0.875, "registers")
    assert r.limits["barriers"] is None  # single-wave workgroups need no barrier


def test_lds_limits_mi300x_workgroups_in_512_byte_blocks() -> None:
    r = occupancy("gfx942", 256, 16, 0, 20000)  # 20,480 bytes allocated: 3 workgroups in 64 KiB
    assert (r.active_blocks_per_sm, r.limited_by, r.allocated_shared_bytes_per_block) == (3, "shared_memory", 20480)


def test_a_1024_work_item_workgroup_needs_at_most_128_vgprs_on_mi300x() -> None:
    assert occupancy("gfx942", 1024, 128).active_blocks_per_sm == 1
    r = occupancy("gfx942", 1024, 136)  # 3 waves a SIMD cannot hold 4 of its 16 wavefronts
    assert not r.launchable and "puts 4 on one SIMD" in r.reason


def test_sgprs_over_100_cost_mi300x_a_wave_per_simd() -> None:
    assert occupancy("gfx942", 64, 16, sgprs_per_wave=101).active_warps_per_sm == 28
    assert not occupancy("gfx942", 64, 16, sgprs_per_wave=103).launchable


def test_amd_results_say_they_are_a_what_if() -> None:
    r = occupancy("gfx942", 256, 64)
    assert r.what_if and r.vendor == "amd" and "what-if" in r.rules
    assert r.reason.startswith("What-if")
    assert not occupancy("gfx942", 256, 16, 0, 65 * 1024).launchable


def test_rdna3_is_wave32_in_wgp_mode_with_one_and_a_half_times_the_vgprs():
    # gfx1100, LLVM: 1536 VGPRs a lane in granules of 24, 16 waves a SIMD, 4 SIMDs a WGP, SGPRs limit nothing
    r = occupancy("gfx1100", 256, 128)  # 128 -> 144 VGPRs: 10 waves a SIMD, 40 a WGP: 5 workgroups of 8
    assert (r.active_warps_per_sm, r.limited_by, r.max_warps_per_sm) == (40, "registers", 64)
    assert occupancy("gfx1100", 64, 96).active_warps_per_sm == 64  # 1536 // 96 = 16: every slot
    assert occupancy("gfx1100", 64, 16, sgprs_per_wave=103).launchable  # no SGPR limit from gfx10 on


def test_rdna3_workgroups_address_64_kib_of_the_wgps_128():
    assert occupancy("gfx1100", 128, 40, 0, 48 * 1024).active_blocks_per_sm == 2
    r = occupancy("gfx1100", 256, 32, 0, 80 * 1024)
    assert not r.launchable and r.limits["shared_memory"] == 0
    assert "a workgroup may address" in r.reason
