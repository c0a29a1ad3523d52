"""Facts about the GPU a worker serves: identity (CuPy), and live state (NVML through nvidia-ml-py).

Identity is what results and calibration files are keyed by: name, UUID,
driver, compute capability, SM count, L2 size. Live state is what a timing is
taken under: SM clock against its default, temperature, clock-event
(throttle) reasons and the other compute processes on the GPU. NVML is
optional: without it (no library, a sandbox that hides it, a simulator host)
every state field is None and timings say so rather than failing.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

# NVML's clock-event ("throttle") reason bits, from nvml.h.
THROTTLE_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
#: Reasons that mean the clock was pulled down by something other than idleness or the power budget.
SERIOUS_REASONS = {"hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}


def decode_throttle(mask: int) -> list[str]:
    """Names of the set bits of an NVML clock-event reason mask."""
    return [name for bit, name in THROTTLE_REASONS.items() if mask & bit]


def format_uuid(raw: bytes | str) -> str | None:
    """CUDA's 16-byte UUID as NVML prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx; None when cut short.

    CuPy hands `cudaDeviceProp.uuid` over as a C string, so it ends at the
    first zero byte: a UUID with one comes back shorter than 16 bytes (run 14's
    H200 gave 12) and names no GPU.
    """
    if isinstance(raw, str):
        return raw if raw.startswith(("GPU-", "MIG-")) else f"GPU-{raw}"
    if len(raw) != 16:
        return None
    h = bytes(raw).hex()
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def cuda_device_identity(device_id: int) -> tuple[dict[str, Any], str, Nvml]:
    """CUDA's properties of `device_id`, its UUID and its NVML handle (found by PCI bus id when CUDA's UUID is cut)."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(device_id)
    uuid = format_uuid(props["uuid"]) if "uuid" in props else None
    nvml = Nvml(uuid=uuid, pci_bus_id=cupy.cuda.Device(device_id).pci_bus_id)
    return props, uuid or nvml.uuid() or f"GPU-index-{device_id}", nvml


@dataclass
class DeviceFacts:
    """What does not change while the worker lives."""

    name: str
    uuid: str
    driver: str
    cuda_runtime: int
    compute_capability: str  # "90"
    sm_count: int
    l2_bytes: int
    memory_bytes: int
    max_shared_per_block_optin: int
    shared_per_sm: int
    regs_per_sm: int
    max_threads_per_sm: int
    sm_clock_max_mhz: int | None = None
    sm_clock_default_mhz: int | None = None
    mig_mode: bool | None = None

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "arch": self.arch}


@dataclass
class DeviceState:
    """The live state a measurement was taken under (None where NVML could not tell)."""

    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    temperature_c: int | None = None
    power_w: float | None = None
    throttle_reasons: list[str] = field(default_factory=list)
    other_processes: list[dict[str, int]] = field(default_factory=list)
    nvml: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def descends_from(pid: int, ancestor: int) -> bool:
    """Whether `pid` is `ancestor` or one of its descendants (host PIDs, read from /proc)."""
    seen = 0
    while pid > 1 and seen < 64:
        if pid == ancestor:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])  # the parent, after the command's name
        except (OSError, ValueError, IndexError):
            return False
        seen += 1
    return pid == ancestor


class Nvml:
    """A thin handle on one GPU through NVML; every method degrades to None without NVML."""

    def __init__(self, uuid: str | None = None, pci_bus_id: str | None = None):
        self.handle: Any = None
        self.pynvml: Any = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.pynvml = pynvml
            self.handle = self._find(uuid, pci_bus_id)
        except Exception:  # no library, no driver access, no such device: stay degraded
            self.handle = None

    def _find(self, uuid: str | None, pci_bus_id: str | None) -> Any:
        nv = self.pynvml
        if uuid:
            try:
                return nv.nvmlDeviceGetHandleByUUID(uuid)
            except Exception:
                pass
        if pci_bus_id:
            try:
                return nv.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
            except Exception:
                pass
        return nv.nvmlDeviceGetHandleByIndex(0) if nv.nvmlDeviceGetCount() == 1 else None

    @property
    def ok(self) -> bool:
        return self.handle is not None

    def uuid(self) -> str | None:
        found = self._call("nvmlDeviceGetUUID")
        return found.decode() if isinstance(found, bytes) else found

    def _call(self, name: str, *args: Any) -> Any:
        if not self.ok:
            return None
        try:
            return getattr(self.pynvml, name)(self.handle, *args)
        except Exception:
            return None

    def sm_clock(self) -> int | None:
        """The SM clock now, in MHz (cheap: one NVML call)."""
        return self._call("nvmlDeviceGetClockInfo", 1)  # NVML_CLOCK_SM

    def sm_clock_max(self) -> int | None:
        return self._call("nvmlDeviceGetMaxClockInfo", 1)

    def sm_clock_default(self) -> int | None:
        return self._call("nvmlDeviceGetDefaultApplicationsClock", 1)

    def reference_clock(self) -> int | None:
        """The clock that samples are judged against: the default application clock, else the maximum."""
        return self.sm_clock_default() or self.sm_clock_max()

    def state(self, own_pids: set[int] | None = None) -> DeviceState:
        if not self.ok:
            return DeviceState()
        mask = self._call("nvmlDeviceGetCurrentClocksEventReasons")
        if mask is None:
            mask = self._call("nvmlDeviceGetCurrentClocksThrottleReasons")
        power = self._call("nvmlDeviceGetPowerUsage")
        mine = {os.getpid()} | (own_pids or set())
        procs = self._call("nvmlDeviceGetComputeRunningProcesses") or []
        others = [
            {"pid": int(p.pid), "used_mib": int((p.usedGpuMemory or 0) // (1 << 20))}
            for p in procs
            if p.pid not in mine
        ]
        return DeviceState(
            sm_clock_mhz=self.sm_clock(),
            mem_clock_mhz=self._call("nvmlDeviceGetClockInfo", 2),  # NVML_CLOCK_MEM
            temperature_c=self._call("nvmlDeviceGetTemperature", 0),  # NVML_TEMPERATURE_GPU
            power_w=power / 1000.0 if power is not None else None,
            throttle_reasons=decode_throttle(mask or 0),
            other_processes=others,
            nvml=True,
        )

    def driver_version(self) -> str | None:
        if not self.pynvml:
            return None
        try:
            v = self.pynvml.nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else str(v)
        except Exception:
            return None

    def mig_mode(self) -> bool | None:
        mode = self._call("nvmlDeviceGetMigMode")
        return bool(mode[0]) if mode else None


def _driver_from_cuda(version: int) -> str:
    return f"cuda{version // 1000}.{(version % 1000) // 10}"


def device_facts(device_id: int = 0, nvml: Nvml | None = None) -> DeviceFacts:
    """Identity of the CUDA device `device_id` as this process sees it (needs CuPy and a GPU)."""
    import cupy

    rt = cupy.cuda.runtime
    props, uuid, found = cuda_device_identity(device_id)
    nvml = nvml or found
    name = props["name"]
    return DeviceFacts(
        name=name.decode() if isinstance(name, bytes) else str(name),
        uuid=uuid,
        driver=nvml.driver_version() or _driver_from_cuda(rt.driverGetVersion()),
        cuda_runtime=rt.runtimeGetVersion(),
        compute_capability=f"{props['major']}{props['minor']}",
        sm_count=int(props["multiProcessorCount"]),
        l2_bytes=int(props["l2CacheSize"]),
        memory_bytes=int(props["totalGlobalMem"]),
        max_shared_per_block_optin=int(props.get("sharedMemPerBlockOptin", props["sharedMemPerBlock"])),
        shared_per_sm=int(props["sharedMemPerMultiprocessor"]),
        regs_per_sm=int(props["regsPerMultiprocessor"]),
        max_threads_per_sm=int(props["maxThreadsPerMultiProcessor"]),
        sm_clock_max_mhz=nvml.sm_clock_max(),
        sm_clock_default_mhz=nvml.sm_clock_default(),
        mig_mode=nvml.mig_mode(),
    )


def gpu_visible() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def mps_status(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Whether this worker is an MPS client (its environment names a pipe directory) and the daemon is there."""
    env = os.environ if environ is None else environ
    pipe = env.get("CUDA_MPS_PIPE_DIRECTORY")
    if not pipe:
        return {"client": False}
    return {
        "client": True,
        "pipe_directory": pipe,
        "daemon_reachable": os.path.exists(os.path.join(pipe, "control")),  # the control daemon's named pipe
        "active_thread_percentage": env.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        "pinned_device_mem_limit": env.get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"),
    }


def live_state(nvml: Nvml) -> dict[str, Any]:
    """The GPU's state now, for the heartbeat: utilisation, memory, temperature, clocks, throttle, MIG, MPS.

    Every field NVML cannot give (no NVML, a MIG device handle that has no utilisation counter) is None;
    a handle that no longer answers says so in `problem` (the slice may have gone: a MIG instance destroyed).
    """
    mps = mps_status()
    if not nvml.ok:
        return {"nvml": False, "mps": mps}
    util = nvml._call("nvmlDeviceGetUtilizationRates")
    memory = nvml._call("nvmlDeviceGetMemoryInfo")
    mask = nvml._call("nvmlDeviceGetCurrentClocksEventReasons")
    if mask is None:
        mask = nvml._call("nvmlDeviceGetCurrentClocksThrottleReasons")
    state = {
        "nvml": True,
        "utilisation_percent": int(util.gpu) if util is not None else None,
        "memory_used_mib": int(memory.used // (1 << 20)) if memory is not None else None,
        "memory_total_mib": int(memory.total // (1 << 20)) if memory is not None else None,
        "temperature_c": nvml._call("nvmlDeviceGetTemperature", 0),
        "sm_clock_mhz": nvml.sm_clock(),
        "mem_clock_mhz": nvml._call("nvmlDeviceGetClockInfo", 2),
        "throttle_reasons": [r for r in decode_throttle(mask or 0) if r != "gpu_idle"],
        "mig_mode": nvml.mig_mode(),
        "compute_mode": nvml._call("nvmlDeviceGetComputeMode"),
        "mps": mps,
    }
    if nvml.uuid() is None:
        state["problem"] = "NVML no longer answers for this GPU: its slice may be gone"
    return state
