"""Module 1's "one kernel, four architectures": resident warps per SM or CU of one kernel, and what limits them.

The learner's function gets a kernel (`threads_per_block`, `registers_per_thread`,
`shared_bytes_per_block`) and an architecture's published limits in one vocabulary
for both vendors (`view`), and answers `(resident_warps, limiter)`. The reference
is the project's occupancy calculator (`science.occupancy`): `cuda_occupancy.h`'s
rules for the A100 (sm_80) and the H100 (sm_90) at the largest shared-memory
carveout, LLVM's AMDGPU rules for the MI300X (gfx942, CDNA3, wave64) and the
RX 7900 XTX (gfx1100, RDNA3, wave32 in WGP mode): what-ifs, as every AMD result of it.

A limiter is right when it is one of the resources tied at the answer (AMD's
barrier limit is called `blocks`, as NVIDIA's block-slot limit is); a kernel that
cannot launch has 0 warps and is limited by whichever resource allows no block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpu_worker.science.archs import AmdArch, get_arch
from gpu_worker.science.occupancy import occupancy

ARCHITECTURES = ("sm_80", "sm_90", "gfx942", "gfx1100")
LABELS = {
    "sm_80": "A100 (sm_80)",
    "sm_90": "H100 (sm_90)",
    "gfx942": "MI300X (gfx942, CDNA3)",
    "gfx1100": "RX 7900 XTX (gfx1100, RDNA3)",
}
LIMITERS = ("warps", "registers", "shared_memory", "blocks")
KERNEL_FIELDS = ("threads_per_block", "registers_per_thread", "shared_bytes_per_block")


def view(name: str) -> dict[str, Any]:
    """An architecture's limits as the learner reads them: one record for NVIDIA's SMs and AMD's CUs and WGPs."""
    a = get_arch(name)
    if isinstance(a, AmdArch):
        return {
            "name": a.name,
            "label": LABELS[a.name],
            "vendor": "amd",
            "unit": a.unit,
            "warp_size": a.wavefront_size,
            "partitions": a.simds_per_cu,
            "max_warps_per_partition": a.max_waves_per_simd,
            "registers_per_lane": a.total_vgprs,
            "register_granule": a.vgpr_allocation_unit,
            "shared_per_unit": a.lds_per_cu,
            "shared_per_block_max": a.max_lds_per_workgroup,
            "shared_reserved_per_block": 0,
            "shared_granule": a.lds_allocation_unit,
            "max_blocks": a.max_barriers_per_cu,
            "single_warp_blocks_uncounted": True,
            "max_threads_per_block": a.max_workgroup_size,
        }
    return {
        "name": a.name,
        "label": LABELS[a.name],
        "vendor": "nvidia",
        "unit": "SM",
        "warp_size": a.warp_size,
        "partitions": a.sub_partitions,
        "max_warps_per_partition": a.max_warps_per_sm // a.sub_partitions,
        "registers_per_lane": a.regs_per_sm // a.sub_partitions // a.warp_size,
        "register_granule": a.register_allocation_unit // a.warp_size,
        "shared_per_unit": a.shared_mem_per_sm,
        "shared_per_block_max": a.shared_mem_per_block_optin,
        "shared_reserved_per_block": a.reserved_shared_mem_per_block,
        "shared_granule": a.shared_allocation_unit,
        "max_blocks": a.max_blocks_per_sm,
        "single_warp_blocks_uncounted": False,
        "max_threads_per_block": a.max_threads_per_block,
    }


def calls(cases: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
    """Every case on every architecture: `(kernel, arch)` per call."""
    out = []
    for i, case in enumerate(cases):
        if set(case) != set(KERNEL_FIELDS) or not all(isinstance(case[f], int) and case[f] >= 0 for f in KERNEL_FIELDS):
            raise ValueError(f"case {i}: give exactly {', '.join(KERNEL_FIELDS)}, each an integer >= 0")
        out += [[dict(case), view(name)] for name in ARCHITECTURES]
    return out


def reference(kernel: Mapping[str, int], name: str) -> tuple[int, set[str], str]:
    """Resident warps, every limiter tied there, and the calculator's sentence saying why."""
    r = occupancy(
        name, kernel["threads_per_block"], kernel["registers_per_thread"], 0, kernel["shared_bytes_per_block"]
    )
    tied = r.limiting_factors if r.launchable else [f for f, n in r.limits.items() if n == 0]
    limiters = {"blocks" if f == "barriers" else f for f in tied}
    return r.active_warps_per_sm, limiters, r.reason


def _words(kernel: Mapping[str, int], name: str) -> str:
    return (
        f"{kernel['threads_per_block']} threads, {kernel['registers_per_thread']} registers, "
        f"{kernel['shared_bytes_per_block']:,} B shared on {LABELS[name]}"
    )


def judge(kernel: Mapping[str, int], arch: Mapping[str, Any], answer: Any) -> tuple[bool, str, str]:
    """Whether `answer` is `(the reference's warps, one of its limiters)`, and a sentence for the learner."""
    name = arch["name"]
    warps, limiters, why = reference(kernel, name)
    label = _words(kernel, name)
    expected = (
        f"{warps} {'wavefronts' if arch['vendor'] == 'amd' else 'warps'} limited by {' or '.join(sorted(limiters))}"
    )
    shaped = isinstance(answer, list) and len(answer) == 2
    if not shaped or not isinstance(answer[0], int) or isinstance(answer[0], bool) or answer[1] not in LIMITERS:
        return (
            False,
            label,
            (
                f"{label}: the answer must be (resident warps, limiter) with the limiter one of "
                f"{', '.join(LIMITERS)}; yours was {answer!r}"
            ),
        )
    if answer[0] == warps and answer[1] in limiters:
        return True, label, f"{label}: {expected}"
    return False, label, f"{label}: yours {answer[0]} limited by {answer[1]}, expected {expected}. {why}"
