"""Vendors' published facts about three GPUs, for the lessons' "beside the machine you are on" figures.

Datasheet and whitepaper numbers, labelled as such wherever drawn; never used as
measurements. Sources:
- NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), "A100 SM architecture" and
  the comparison table of A100 with V100; NVIDIA A100 80GB datasheet (bandwidth, memory).
- NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), "H100 SM architecture" and its
  table of H100 SXM5 against A100; NVIDIA H100 SXM datasheet (bandwidth, memory).
- AMD CDNA 3 Instruction Set Architecture / AMD CDNA 3 architecture whitepaper (2023), the
  compute unit and the memory hierarchy (XCDs, L2 per XCD, AMD Infinity Cache); AMD Instinct
  MI300X datasheet (CUs, memory, bandwidth, peak engine clock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KIB, MIB, GIB = 1024, 1024**2, 1024**3


@dataclass(frozen=True)
class Machine:
    """One GPU's hierarchy: per-SM (per-CU) storage, chip-wide caches and memory, and how fast memory is."""

    name: str
    source: str  # where the numbers came from, shown in the figure
    units: int  # SMs, or compute units on AMD
    unit_word: str  # "SM" or "CU"
    warp_size: int
    register_bytes_per_unit: int
    shared_bytes_per_unit: int  # the most a kernel may use as shared memory / LDS
    l1_shared_bytes_per_unit: int | None  # NVIDIA: L1 and shared memory are one array
    l2_bytes: int
    last_level_bytes: int | None  # AMD Infinity Cache (the MALL); None where there is none
    memory_bytes: int
    memory_bandwidth: float | None  # bytes/s
    max_threads_per_unit: int | None
    clock_mhz: int | None  # boost / peak engine clock as published

    def levels(self) -> dict[str, int | None]:
        """Chip-wide capacity per level of the hierarchy, in bytes, fastest first."""
        return {
            "registers": self.register_bytes_per_unit * self.units,
            "shared memory / LDS": self.shared_bytes_per_unit * self.units,
            "L2": self.l2_bytes,
            "Infinity Cache": self.last_level_bytes,
            "HBM": self.memory_bytes,
        }


DATASHEET_MACHINES: tuple[Machine, ...] = (
    Machine(
        name="NVIDIA A100 SXM 80GB",
        source="A100 whitepaper and datasheet",
        units=108,
        unit_word="SM",
        warp_size=32,
        register_bytes_per_unit=256 * KIB,
        shared_bytes_per_unit=164 * KIB,
        l1_shared_bytes_per_unit=192 * KIB,
        l2_bytes=40 * MIB,
        last_level_bytes=None,
        memory_bytes=80 * GIB,
        memory_bandwidth=2.039e12,
        max_threads_per_unit=2048,
        clock_mhz=1410,
    ),
    Machine(
        name="NVIDIA H100 SXM5 80GB",
        source="H100 whitepaper and datasheet",
        units=132,
        unit_word="SM",
        warp_size=32,
        register_bytes_per_unit=256 * KIB,
        shared_bytes_per_unit=228 * KIB,
        l1_shared_bytes_per_unit=256 * KIB,
        l2_bytes=50 * MIB,
        last_level_bytes=None,
        memory_bytes=80 * GIB,
        memory_bandwidth=3.35e12,
        max_threads_per_unit=2048,
        clock_mhz=None,  # the whitepaper's table leaves the SXM5 boost clock unfinalised
    ),
    Machine(
        name="AMD Instinct MI300X",
        source="CDNA 3 whitepaper and MI300X datasheet",
        units=304,
        unit_word="CU",
        warp_size=64,
        register_bytes_per_unit=512 * KIB,
        shared_bytes_per_unit=64 * KIB,
        l1_shared_bytes_per_unit=None,  # LDS and the 32 KB vector L1 are separate on CDNA 3
        l2_bytes=32 * MIB,  # 4 MB per XCD, eight XCDs
        last_level_bytes=256 * MIB,
        memory_bytes=192 * GIB,
        memory_bandwidth=5.3e12,
        max_threads_per_unit=None,
        clock_mhz=2100,
    ),
)


def machine_from_heartbeat(beat: dict[str, Any]) -> Machine | None:
    """A live worker's slice as a Machine: the driver's facts (CUDA device properties) and its measured HBM read."""
    facts = beat.get("device_facts") or {}
    if not facts.get("sm_count"):
        return None
    ceilings = beat.get("ceilings") or {}
    return Machine(
        name=str(facts.get("name") or beat.get("device") or "this GPU"),
        source=f"worker {beat.get('name', '?')}: CUDA device properties, HBM bandwidth measured",
        units=int(facts["sm_count"]),
        unit_word="SM",
        warp_size=32,
        register_bytes_per_unit=4 * int(facts.get("regs_per_sm") or 0),  # the driver counts 32-bit registers
        shared_bytes_per_unit=int(facts.get("shared_per_sm") or 0),
        l1_shared_bytes_per_unit=None,
        l2_bytes=int(facts.get("l2_bytes") or 0),
        last_level_bytes=None,
        memory_bytes=int(facts.get("memory_bytes") or 0),
        memory_bandwidth=ceilings.get("hbm_read_bytes_per_s"),
        max_threads_per_unit=facts.get("max_threads_per_sm"),
        clock_mhz=facts.get("sm_clock_max_mhz"),
    )
