"""Vendors' datasheet ceilings, drawn dashed beside the measured ones; leads, never measurements.

Sources: NVIDIA H200, H100 SXM and A100 SXM datasheets (dense rates, no sparsity).
"""

from __future__ import annotations

from pydantic import BaseModel


class Datasheet(BaseModel):
    name: str
    memory_bandwidth: float  # bytes/s
    fp32: float  # FLOP/s
    bf16_tensor: float  # FLOP/s, dense


DATASHEETS: dict[str, Datasheet] = {
    "H200": Datasheet(name="NVIDIA H200 SXM (datasheet)", memory_bandwidth=4.8e12, fp32=67e12, bf16_tensor=989e12),
    "H100": Datasheet(name="NVIDIA H100 SXM (datasheet)", memory_bandwidth=3.35e12, fp32=67e12, bf16_tensor=989e12),
    "A100": Datasheet(
        name="NVIDIA A100 SXM 80GB (datasheet)", memory_bandwidth=2.039e12, fp32=19.5e12, bf16_tensor=312e12
    ),
}


def datasheet_for(device_name: str) -> Datasheet | None:
    """The datasheet of a device named like 'NVIDIA H200' or 'NVIDIA H100 80GB HBM3'."""
    upper = device_name.upper()
    for key, sheet in DATASHEETS.items():
        if key in upper:
            return sheet
    return None
