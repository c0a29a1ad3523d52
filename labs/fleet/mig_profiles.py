"""The GPUs the planner knows and their MIG profiles, as data: what can be cut, and where.

Source: NVIDIA Multi-Instance GPU User Guide (docs.nvidia.com/datacenter/tesla/mig-user-guide),
section "Supported MIG Profiles", the tables for A100-SXM4-40GB, A100-SXM4-80GB, H100-SXM5-80GB,
H100 NVL (94 GB) and H200-SXM5 (141 GB): per GPU instance profile its compute slices (of 7), memory
slices (of 8), SM count, instance count and the placements `nvidia-smi mig -lgipp` prints as
`{starts}:size` in memory-slice units. Transcribed by hand without network access here: check a GPU's
table against `bench/mig_probe.py` (NVML's own profile list, read-only) before trusting a new model.
Memory is the profile's name's figure (the guide's exact usable amount is slightly less).
"""

from __future__ import annotations

from dataclasses import dataclass

MEMORY_SLICES = 8  # every MIG-capable GPU here has 8 memory slices and 7 compute slices
COMPUTE_SLICES = 7


@dataclass(frozen=True)
class MigProfile:
    """One GPU instance profile: `1g.18gb` uses 1 compute slice, 1 memory slice, 16 SMs, starts at 0..6."""

    name: str
    compute_slices: int
    memory_slices: int
    sms: int
    memory_gb: float
    max_count: int
    starts: tuple[int, ...]

    @property
    def media(self) -> bool:
        """A `+me` profile carries the media engines; only one fits a GPU."""
        return self.name.endswith("+me")


@dataclass(frozen=True)
class GpuModel:
    """A GPU model the planner can lay out: its SMs, memory and MIG profiles (none: MIG not supported)."""

    key: str
    label: str
    sms: int
    memory_gb: float
    names: tuple[str, ...]  # what NVML's nvmlDeviceGetName says for it, matched case-insensitively
    profiles: tuple[MigProfile, ...] = ()

    def profile(self, name: str) -> MigProfile | None:
        return next((p for p in self.profiles if p.name == name), None)


def _family(sizes: dict[str, float], sms: dict[int, int], sms_1g_wide: int, full_sms: int) -> tuple[MigProfile, ...]:
    """The seven profiles every A100/H100/H200 has, from its memory sizes (GB) and SM counts per compute width.

    The placements are the same across these GPUs (the guide's tables agree): 1g on one memory slice
    at 0..6, the wide 1g and 2g on two slices at even starts, 3g on four at 0 or 4, 4g at 0, 7g whole.
    """
    one, two, four, eight = sizes["1"], sizes["2"], sizes["4"], sizes["8"]

    def gb(x: float) -> str:
        return f"{x:g}gb"

    return (
        MigProfile(f"1g.{gb(one)}", 1, 1, sms[1], one, 7, (0, 1, 2, 3, 4, 5, 6)),
        MigProfile(f"1g.{gb(one)}+me", 1, 1, sms[1], one, 1, (0, 1, 2, 3, 4, 5, 6)),
        MigProfile(f"1g.{gb(two)}", 1, 2, sms_1g_wide, two, 4, (0, 2, 4, 6)),
        MigProfile(f"2g.{gb(two)}", 2, 2, sms[2], two, 3, (0, 2, 4)),
        MigProfile(f"3g.{gb(four)}", 3, 4, sms[3], four, 2, (0, 4)),
        MigProfile(f"4g.{gb(four)}", 4, 4, sms[4], four, 1, (0,)),
        MigProfile(f"7g.{gb(eight)}", 7, 8, full_sms, eight, 1, (0,)),
    )


_AMPERE_SMS = {1: 14, 2: 28, 3: 42, 4: 56}
_HOPPER_SMS = {1: 16, 2: 32, 3: 60, 4: 64}

MODELS: tuple[GpuModel, ...] = (
    GpuModel(
        "a100-40gb",
        "NVIDIA A100 40GB",
        108,
        40,
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB", "NVIDIA A100 40GB"),
        _family({"1": 5, "2": 10, "4": 20, "8": 40}, _AMPERE_SMS, 14, 98),
    ),
    GpuModel(
        "a100-80gb",
        "NVIDIA A100 80GB",
        108,
        80,
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100 80GB"),
        _family({"1": 10, "2": 20, "4": 40, "8": 80}, _AMPERE_SMS, 14, 98),
    ),
    GpuModel(
        "h100-80gb",
        "NVIDIA H100 80GB",
        132,
        80,
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100", "NVIDIA H100 80GB"),
        _family({"1": 10, "2": 20, "4": 40, "8": 80}, _HOPPER_SMS, 26, 132),
    ),
    GpuModel(
        "h100-94gb",
        "NVIDIA H100 NVL 94GB",
        132,
        94,
        ("NVIDIA H100 NVL", "NVIDIA H100 94GB"),
        _family({"1": 12, "2": 24, "4": 47, "8": 94}, _HOPPER_SMS, 26, 132),
    ),
    GpuModel(
        "h200-141gb",
        "NVIDIA H200 141GB",
        132,
        141,
        ("NVIDIA H200", "NVIDIA H200 141GB", "NVIDIA H200 NVL"),
        _family({"1": 18, "2": 35, "4": 71, "8": 141}, _HOPPER_SMS, 26, 132),
    ),
)

BY_KEY = {m.key: m for m in MODELS}


def model_for(name_or_key: str) -> GpuModel | None:
    """The planner's model for a key (`h200-141gb`) or an NVML name (`NVIDIA H200`); None when unknown."""
    wanted = name_or_key.strip().lower()
    for model in MODELS:
        if wanted == model.key or wanted in (n.lower() for n in model.names) or wanted == model.label.lower():
            return model
    return None


def known_models_words() -> str:
    """The models the planner knows, for a message that names what it would accept."""
    return ", ".join(f"{m.label} ({m.key})" for m in MODELS)
