"""The occupancy calculator against the vendor's: cuda_occupancy.h from the installed CUDA toolkit.

A small C++ harness (occupancy_harness/occ_harness.cpp) includes the header from the
toolkit, never a copy, and runs cudaOccMaxActiveBlocksPerMultiprocessor on configurations
piped to it. 100,000 stratified random configurations per architecture go through one
harness process each; active blocks, every per-factor limit and the limiting-factor bits
must match exactly. Without a toolkit header or a C++ compiler the tests skip and say why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpu_worker.science.archs import NVIDIA_ARCHES, NVIDIA_ARCHS, NvidiaArch
from gpu_worker.science.occupancy import FACTOR_BITS, cuda_occupancy_batch, occupancy

HARNESS = Path(__file__).parent / "occupancy_harness" / "occ_harness.cpp"
CONFIGS_PER_ARCH = 100_000
SEED = int(os.environ.get("WARPLAB_OCC_SEED", "20240"))
IN_FIELDS = ("threads", "regs", "static", "dynamic", "max_dynamic", "carveout", "barriers")
OUT_FIELDS = (
    "status",
    "active_blocks",
    "limiting_factors",
    "limit_registers",
    "limit_shared_memory",
    "limit_warps",
    "limit_blocks",
    "limit_barriers",
    "allocated_shared_bytes_per_block",
)


def find_cuda_include() -> Path | None:
    """The include folder of the installed toolkit: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, or beside nvcc."""
    candidates = [Path(os.environ[v]) / "include" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    candidates.append(Path("/usr/local/cuda/include"))
    nvcc = shutil.which("nvcc")
    if nvcc:
        real = Path(nvcc).resolve()
        candidates.append(real.parent.parent / "include")
        if real.stat().st_size < 4096:  # a wrapper script such as `exec /usr/local/cuda-13.0/bin/nvcc "$@"`
            for target in re.findall(r"(/\S+)/bin/nvcc", real.read_text(errors="replace")):
                candidates.append(Path(target) / "include")
    candidates += sorted(Path("/usr/local").glob("cuda-*/include"), reverse=True)
    return next((c for c in candidates if (c / "cuda_occupancy.h").is_file()), None)


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    include = find_cuda_include()
    if include is None:
        pytest.skip("no cuda_occupancy.h found: set CUDA_HOME to a CUDA toolkit (or put nvcc on PATH)")
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler (g++) to build the cuda_occupancy.h harness")
    exe = tmp_path_factory.mktemp("occ") / "occ_harness"
    subprocess.run([cxx, "-O2", "-std=c++11", f"-I{include}", str(HARNESS), "-o", str(exe)], check=True)
    return exe


def run_harness(exe: Path, arch: str, configs: np.ndarray) -> dict[str, np.ndarray]:
    proc = subprocess.run([str(exe), arch], input=configs.astype("<i4").tobytes(), capture_output=True, check=True)
    out = np.frombuffer(proc.stdout, dtype="<i4").reshape(-1, len(OUT_FIELDS)).astype(np.int64)
    return {name: out[:, i] for i, name in enumerate(OUT_FIELDS)}


def stratified_configs(a: NvidiaArch, n: int, rng: np.random.Generator) -> np.ndarray:
    """n configurations, a seventh uniform and the rest crowded onto the edges where the answer changes."""
    optin, per_sm, unit = a.shared_mem_per_block_optin, a.shared_mem_per_sm, a.shared_allocation_unit
    k = n // 8
    rows = []

    def block(threads, regs, static, dynamic, max_dyn=None, carveout=-1, barriers=1):
        threads, regs, static, dynamic = (np.asarray(x, dtype=np.int64) for x in (threads, regs, static, dynamic))
        static = np.clip(static, 0, a.shared_mem_per_block)
        dynamic = np.clip(dynamic, 0, None)
        if max_dyn is None:
            max_dyn = np.maximum(optin - static, 0)
        cols = np.broadcast_arrays(threads, regs, static, dynamic, max_dyn, carveout, barriers)
        rows.append(np.stack(cols, axis=1))

    def threads_any(m):
        return rng.integers(1, 1025, m)

    # 1. Uniform over everything, shared memory up to a little past the opt-in limit.
    total = rng.integers(0, optin + 2049, k)
    static = np.minimum(rng.integers(0, a.shared_mem_per_block + 1, k), total)
    block(threads_any(k), rng.integers(0, 256, k), static, total - static)
    # 2. Block sizes at warp multiples and one either side; registers at the 8-per-thread allocation steps.
    warps = rng.integers(1, 33, k)
    regs = np.clip(8 * rng.integers(0, 33, k) + rng.integers(-1, 2, k), 0, 255)
    block(np.clip(32 * warps + rng.integers(-1, 2, k), 1, 1024), regs, 0, rng.integers(0, 4097, k))
    # 3. Registers at the per-block limit (warps rounded up to the four sub-partitions) and the SM's steps.
    threads = threads_any(k)
    warps = -(-threads // 32)
    w4 = -(-warps // 4) * 4
    edge = np.where(rng.random(k) < 0.5, 65536 // (w4 * 32), (16384 // (rng.integers(1, 17, k) * 256)) * 8)
    block(threads, np.clip(edge + rng.integers(-9, 10, k), 0, 255), 0, 0)
    # 4. Shared memory at the steps where one block more or less fits, and at the opt-in limit.
    per_block = np.where(rng.random(k) < 0.8, per_sm // rng.integers(1, a.max_blocks_per_sm + 1, k), optin)
    total = np.clip(per_block - a.reserved_shared_mem_per_block + rng.integers(-2 * unit, 2 * unit + 1, k), 0, None)
    static = np.where(rng.random(k) < 0.3, np.minimum(total, rng.integers(0, a.shared_mem_per_block + 1, k)), 0)
    block(rng.integers(1, 257, k), rng.integers(0, 65, k), static, total - static)
    # 5. Carveout preferences, 0 to 100 percent and none, with shared memory near the carveout sizes.
    sizes = np.array(a.carveouts_kib) * 1024
    near = sizes[rng.integers(0, len(sizes), k)] // rng.integers(1, 5, k) + rng.integers(-unit, unit + 1, k)
    block(threads_any(k), rng.integers(0, 129, k), 0, np.clip(near, 0, optin), carveout=rng.integers(-1, 101, k))
    # 6. The kernel's own dynamic shared-memory maximum, below and above the request.
    max_dyn = rng.integers(0, optin + 1, k)
    block(threads_any(k), rng.integers(0, 129, k), 0, max_dyn + rng.integers(-2 * unit, 2 * unit + 1, k), max_dyn)
    # 7. Block barriers on small blocks, where the blocks-per-SM and barrier limits bind (sm_90 on).
    block(rng.integers(1, 129, k), rng.integers(0, 33, k), 0, rng.integers(0, 2049, k), barriers=rng.integers(0, 5, k))
    # 8. The corners: no registers or no shared memory (no limit), 256 registers, blocks over 1024 threads.
    m = n - 7 * k
    corner = rng.integers(0, 4, m)
    threads = np.where(corner == 3, rng.integers(1025, 2049, m), threads_any(m))
    regs = np.select([corner == 0, corner == 1], [0, 256], rng.integers(0, 256, m))
    block(threads, regs, 0, np.where(corner == 2, 0, rng.integers(0, 8193, m)))
    return np.concatenate(rows)


def _mismatch_report(configs: np.ndarray, got: dict, want: dict, field: str) -> str:
    bad = np.flatnonzero(got[field] != want[field])
    lines = [f"{len(bad)} of {len(configs)} configurations differ on {field}; first ones:"]
    for i in bad[:5]:
        cfg = dict(zip(IN_FIELDS, configs[i].tolist(), strict=True))
        lines.append(f"  {cfg}: ours {int(got[field][i])}, cuda_occupancy.h {int(want[field][i])}")
    return "\n".join(lines)


@pytest.mark.parametrize("arch", NVIDIA_ARCHES)
def test_the_calculator_matches_cuda_occupancy_h_on_100k_configurations(harness: Path, arch: str) -> None:
    a = NVIDIA_ARCHS[arch]
    configs = stratified_configs(a, CONFIGS_PER_ARCH, np.random.default_rng([SEED, a.major, a.minor]))
    want = run_harness(harness, arch, configs)
    if np.all(want["status"] == 2):
        pytest.skip(f"this toolkit's cuda_occupancy.h predates {arch}")
    assert np.all(want["status"] == 0), "the harness was given an invalid configuration"
    t, r, s, d, max_dyn, c, bars = configs.T
    got = cuda_occupancy_batch(a, t, r, s, d, max_dynamic_shared_bytes=max_dyn, carveout=c, block_barriers=bars)
    for field in OUT_FIELDS[1:]:
        assert np.array_equal(got[field], want[field]), _mismatch_report(configs, got, want, field)


@pytest.mark.parametrize("arch", NVIDIA_ARCHES)
def test_the_one_configuration_calculator_agrees_with_cuda_occupancy_h(harness: Path, arch: str) -> None:
    """occupancy() answers the header's block count and one of its limiting factors, or says why it cannot launch."""
    a = NVIDIA_ARCHS[arch]
    configs = stratified_configs(a, 1_600, np.random.default_rng([SEED, a.major, a.minor, 1]))
    want = run_harness(harness, arch, configs)
    if np.all(want["status"] == 2):
        pytest.skip(f"this toolkit's cuda_occupancy.h predates {arch}")
    for cfg, active, bits in zip(configs.tolist(), want["active_blocks"], want["limiting_factors"], strict=True):
        t, r, s, d, max_dyn, c, bars = cfg
        res = occupancy(arch, t, r, s, d, max_dynamic_shared_bytes=max_dyn, carveout=c, block_barriers=bars)
        stricter = t > 1024 or r > 255  # the limits the header leaves to the compiler
        if active == 0 or stricter:
            assert not res.launchable and res.limited_by == "cannot_launch" and res.reason, cfg
            assert res.active_blocks_per_sm == 0, cfg
        else:
            assert res.launchable, (cfg, res.reason)
            assert res.active_blocks_per_sm == active, cfg
            assert FACTOR_BITS[res.limited_by] & bits, (cfg, res.limited_by, bits)
            assert res.active_warps_per_sm == active * -(-t // 32)
