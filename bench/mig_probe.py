"""Read-only: the GPU's real MIG state through NVML, beside what the planner's table says for that model.

    python3 bench/mig_probe.py [--json FILE]

Per GPU: name, UUID, MIG mode (current and pending), the MIG devices that exist (UUID, SMs, memory),
and NVML's own GPU-instance profiles (slices, instance count, SMs, memory) where the driver gives them,
each matched to `labs.fleet.mig_profiles` so a transcription error in the planner's table shows as a
mismatch. It calls only NVML getters: it never enables MIG, creates or destroys an instance, or
changes clocks or the compute mode. Without NVML (a CPU machine) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labs.fleet.mig_profiles import model_for  # noqa: E402  (plain data: no Django)

PROFILE_IDS = range(0, 16)  # NVML_GPU_INSTANCE_PROFILE_1_SLICE (0) ... the REV1/REV2 variants after 7


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _try(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:  # every NVML error is a fact to report, not a failure of the probe
        return {"error": f"{type(exc).__name__}: {exc}"}


def _profiles(nv: Any, handle: Any) -> list[dict[str, Any]]:
    found = []
    for pid in PROFILE_IDS:
        info = _try(nv.nvmlDeviceGetGpuInstanceProfileInfo, handle, pid)
        if isinstance(info, dict):
            continue
        found.append(
            {
                "profile_id": pid,
                "nvml_id": int(info.id),
                "slices": int(info.sliceCount),
                "instances": int(info.instanceCount),
                "sms": int(info.multiprocessorCount),
                "memory_mib": int(info.memorySizeMB),
            }
        )
    return found


def _mig_devices(nv: Any, handle: Any) -> list[dict[str, Any]]:
    count = _try(nv.nvmlDeviceGetMaxMigDeviceCount, handle)
    devices = []
    for i in range(count if isinstance(count, int) else 0):
        mig = _try(nv.nvmlDeviceGetMigDeviceHandleByIndex, handle, i)
        if isinstance(mig, dict):
            continue
        attrs = _try(nv.nvmlDeviceGetAttributes, mig)
        memory = _try(nv.nvmlDeviceGetMemoryInfo, mig)
        devices.append(
            {
                "uuid": _text(_try(nv.nvmlDeviceGetUUID, mig)),
                "sms": getattr(attrs, "multiprocessorCount", None),
                "memory_mib": int(memory.total // (1 << 20)) if not isinstance(memory, dict) else None,
            }
        )
    return devices


def _compare(name: str, profiles: list[dict[str, Any]]) -> list[str]:
    model = model_for(name)
    if model is None:
        return [f"the planner does not know {name}"]
    notes = []
    for p in profiles:
        ours = [q for q in model.profiles if q.compute_slices == p["slices"] and q.sms == p["sms"]]
        if not ours:
            notes.append(f"NVML profile {p['profile_id']}: {p['slices']} slices, {p['sms']} SMs: no planner profile")
        elif all(q.max_count != p["instances"] for q in ours):
            notes.append(f"NVML profile {p['profile_id']}: {p['instances']} instances; planner {ours[0].max_count}")
    return notes


def probe() -> dict[str, Any]:
    try:
        import pynvml as nv

        nv.nvmlInit()
    except Exception as exc:
        return {"nvml": False, "why": f"NVML is not available here ({type(exc).__name__}: {exc})", "gpus": []}
    gpus = []
    for index in range(nv.nvmlDeviceGetCount()):
        handle = nv.nvmlDeviceGetHandleByIndex(index)
        name = _text(nv.nvmlDeviceGetName(handle))
        mode = _try(nv.nvmlDeviceGetMigMode, handle)
        profiles = _profiles(nv, handle)
        gpus.append(
            {
                "index": index,
                "name": name,
                "uuid": _text(nv.nvmlDeviceGetUUID(handle)),
                "mig_mode": {"current": mode[0], "pending": mode[1]} if isinstance(mode, list | tuple) else mode,
                "mig_devices": _mig_devices(nv, handle),
                "nvml_profiles": profiles,
                "planner_model": getattr(model_for(name), "key", None),
                "planner_mismatches": _compare(name, profiles),
            }
        )
    return {"nvml": True, "driver": _text(nv.nvmlSystemGetDriverVersion()), "gpus": gpus}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="also write the facts here")
    args = parser.parse_args(argv)
    facts = probe()
    text = json.dumps(facts, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
