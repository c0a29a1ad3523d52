"""The occupancy calculator against a real GPU's driver (`pytest -m gpu` on a machine with one).

occupancy_harness/driver_check.cu asks cudaOccupancyMaxActiveBlocksPerMultiprocessor about eight
kernels of 12 to 255 registers and up to 48,000 bytes of static shared memory, over block sizes,
dynamic shared memory, carveout preferences and the kernel's maximum dynamic shared memory, and
launches at the edge of that maximum. Every answer must be the calculator's, every launch must
succeed exactly when the calculator says it can, and the device's properties must be the table's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpu_worker.science.archs import NVIDIA_ARCHS, arch_from_cc
from gpu_worker.science.occupancy import cuda_occupancy_batch, occupancy

SOURCE = Path(__file__).parent / "occupancy_harness" / "driver_check.cu"

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def driver_answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict]]:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("needs nvcc to build occupancy_harness/driver_check.cu")
    exe = tmp_path_factory.mktemp("driver") / "driver_check"
    subprocess.run([nvcc, "-O2", "-arch=native", str(SOURCE), "-o", str(exe)], check=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=120)
    return proc.stderr, [json.loads(line) for line in proc.stdout.splitlines()]


def test_the_devices_properties_are_the_architecture_tables(driver_answers: tuple[str, list[dict]]) -> None:
    props, rows = driver_answers
    a = NVIDIA_ARCHS[arch_from_cc(str(rows[0]["cc"]))]
    found = dict(re.findall(r"([\w/]+) (\d+)", props))
    assert int(found["threads/SM"]) == a.max_threads_per_sm and int(found["blocks/SM"]) == a.max_blocks_per_sm
    assert int(found["smem/SM"]) == a.shared_mem_per_sm and int(found["optin"]) == a.shared_mem_per_block_optin
    assert int(found["reserved"]) == a.reserved_shared_mem_per_block


def test_the_calculator_answers_what_the_driver_answers(driver_answers: tuple[str, list[dict]]) -> None:
    _, rows = driver_answers
    arch = arch_from_cc(str(rows[0]["cc"]))
    col = {k: np.array([r[k] for r in rows]) for k in ("threads", "regs", "static", "dynamic", "max_dynamic")}
    carveout = np.array([r["carveout"] for r in rows])
    ours = cuda_occupancy_batch(
        arch,
        col["threads"],
        col["regs"],
        col["static"],
        col["dynamic"],
        max_dynamic_shared_bytes=col["max_dynamic"],
        carveout=carveout,
    )["active_blocks"]
    driver = np.array([r["blocks"] for r in rows])
    bad = np.flatnonzero(ours != driver)
    assert len(bad) == 0, f"{len(bad)} of {len(rows)} differ, e.g. {[(rows[i], int(ours[i])) for i in bad[:3]]}"


def test_a_launch_succeeds_exactly_when_the_calculator_says_it_can(driver_answers: tuple[str, list[dict]]) -> None:
    """At the kernel's dynamic shared-memory maximum and one byte over, with blocks of 256 and 1024 threads."""
    launches = [r for r in driver_answers[1] if "launch" in r]
    assert launches
    arch = arch_from_cc(str(launches[0]["cc"]))
    for r in launches:
        res = occupancy(
            arch,
            r["threads"],
            r["regs"],
            r["static"],
            r["dynamic"],
            max_dynamic_shared_bytes=r["max_dynamic"],
            max_threads_per_block=r["kernel_max_threads"],
        )
        assert res.launchable == (r["launch"] == "cudaSuccess"), (r, res.reason)
