"""Execution backends: `sim` (CPU: CUDA C++ on the PTX executor, Numba on its simulator) and `cuda` (a GPU).

`get_backend` is called inside the sandboxed child; `device_name` in the
engine, where it must not initialise CUDA. Also owns the compile server, the module rules of a
kernel file, Numba's launch ABI, device-side checks and the toolkit's listings (PTX, SASS, ptxas).

May import: `gpu_worker.ptx`, `gpu_worker.measurement`, `gpu_worker.science`, `gpu_worker.exercise`,
`gpu_worker.protocol` and `gpu_worker.settings`.
"""

from __future__ import annotations

import importlib

from gpu_worker.backends.base import Backend

# The CPU tier's outputs and memory report come from the PTX executor (`ptx_sim`), whatever the language.
SIM_DEVICE = "CPU tier: PTX executor (NumPy), sm_90 PTX run on the CPU"


def _module(name: str):
    if name not in ("sim", "cuda"):
        raise ValueError(f"unknown backend {name!r} (known: sim, cuda)")
    return importlib.import_module(f"gpu_worker.backends.{name}")


_KEPT: dict[str, Backend] = {}  # one instance a spare made before its job's request came (`keep`)


def keep(backend: Backend) -> None:
    """The instance the next `get_backend` of its name returns: a spare makes its job's backend ahead."""
    _KEPT[backend.name] = backend


def get_backend(name: str) -> Backend:
    """An instance of the backend called `name` (the one `keep` holds, once); ImportError if this worker lacks it."""
    kept = _KEPT.pop(name, None)
    return kept if kept is not None else _module(name).BACKEND()


def device_name(name: str) -> str:
    """What the backend runs on, in words, without starting it."""
    if name == "sim":
        return SIM_DEVICE
    module = _module(name)
    describe = getattr(module, "device_name", None)
    return describe() if describe else name
