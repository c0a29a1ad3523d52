"""On the GPU: inputs are born on the device from the job's seed, reproducible, fresh per seed, in the host path's
ranges and dtypes, with outputs poisoned; every lab's check runs on them (the seed's warm-up path)."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_worker.backends.device_check import check_once
from gpu_worker.exercise.device_inputs import make_device_arguments
from gpu_worker.exercise.inputs import INT_SENTINEL
from gpu_worker.exercise.labspec import find_lab, load_all

pytestmark = pytest.mark.gpu
ARGS = find_lab("vector-add").spec.harness().args_for("cuda")


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


def test_the_same_seed_gives_the_same_device_inputs_and_another_seed_others(cp):
    first = make_device_arguments(cp, ARGS, {"n": 4097}, 42)
    second = make_device_arguments(cp, ARGS, {"n": 4097}, 42)
    other = make_device_arguments(cp, ARGS, {"n": 4097}, 43)
    assert bool(cp.array_equal(first["a"], second["a"])) and bool(cp.array_equal(first["b"], second["b"]))
    assert not bool(cp.array_equal(first["a"], other["a"]))
    assert not bool(cp.array_equal(first["a"], first["b"]))  # two inputs, two draws


def test_device_inputs_have_the_declared_dtype_shape_and_range_and_outputs_start_poisoned(cp):
    values = make_device_arguments(cp, ARGS, {"n": 1 << 20}, 7)
    a = values["a"]
    assert isinstance(a, cp.ndarray) and a.dtype == np.float32 and a.shape == (1 << 20,)
    assert float(a.min()) >= -1.0 and float(a.max()) < 1.0 and abs(float(a.mean())) < 0.01
    assert values["n"] == 1 << 20 and isinstance(values["n"], np.int32)
    assert bool(cp.isnan(values["c"]).all())


def test_integer_and_normal_inputs_on_the_device(cp):
    from gpu_worker.protocol import ArgSpec

    args = [
        ArgSpec(name="i", role="in", dtype="int32", shape=["n"], init="randint"),
        ArgSpec(name="z", role="in", dtype="float32", shape=["n"], init="normal"),
        ArgSpec(name="h", role="in", dtype="float16", shape=["n"]),
        ArgSpec(name="o", role="out", dtype="int32", shape=["n"]),
    ]
    values = make_device_arguments(cp, args, {"n": 100_001}, 5)
    assert int(values["i"].min()) >= 0 and int(values["i"].max()) < 1000 and values["i"].dtype == np.int32
    assert abs(float(values["z"].std()) - 1.0) < 0.02 and values["z"].shape == (100_001,)
    assert values["h"].dtype == np.float16
    assert bool((values["o"] == INT_SENTINEL["int32"]).all())


def test_every_lab_s_device_check_runs_on_device_born_inputs(cp):
    failed = []
    for lab in load_all()[1]:
        sizes = (lab.spec.sizes.get("cuda") or lab.spec.sizes.get("sim") or [None])[0]
        if sizes is None:
            continue
        try:
            check_once(cp, lab.spec, sizes)
        except Exception as exc:
            failed.append(f"{lab.spec.slug}: {type(exc).__name__}: {exc}"[:300])
    assert failed == []
