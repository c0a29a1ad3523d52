"""The measuring process launches Triton's cubin only with a parameter layout and launch it understands."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gpu_worker.backends import triton_abi
from gpu_worker.protocol import ArgSpec

ARGS = [
    ArgSpec(name="a", role="in", shape=["n"]),
    ArgSpec(name="c", role="out", shape=["n"]),
    ArgSpec(name="n", role="scalar", dtype="int32", value="n"),
]
META = {"name": "k", "num_warps": 4, "shared": 0, "num_ctas": 1, "global_scratch_size": 0, "profile_scratch_size": 0}


def ptx(*params: str, threads: int = 128) -> str:
    body = ",\n".join(f"\t.param .{p} k_param_{i}" for i, p in enumerate(params))
    return f".visible .entry k(\n{body}\n)\n.reqntid {threads}\n{{\n\tret;\n}}\n"


GOOD = ptx("u64 .ptr .global .align 1", "u64 .ptr .global .align 1", "u32", "u64 .ptr", "u64 .ptr")


def test_it_reads_the_exercise_arguments_then_one_pointer_per_scratch_field():
    abi = triton_abi.read(META, GOOD, ARGS)
    assert (abi.name, abi.threads, abi.shared, abi.scratch) == ("k", 128, 0, 2)
    older = {k: v for k, v in META.items() if not k.endswith("scratch_size")}  # a Triton before scratch pointers
    assert triton_abi.read(older, ptx("u64", "u64", "u32"), ARGS).scratch == 0


@pytest.mark.parametrize(
    "source",
    [
        ptx("u64", "u64", "u32"),  # the scratch pointers the metadata declares are missing
        ptx("u64", "u64", "u64", "u64", "u64"),  # n passed as 64 bits
        ptx("u64", "u64", "u32", "u64", "u64", "u64"),  # a parameter nobody declared
        GOOD.replace(".reqntid 128", ".reqntid 256"),
        GOOD.replace("entry k(", "entry other("),
    ],
)
def test_it_fails_closed_as_ours_when_the_abi_is_not_understood(source: str):
    with pytest.raises(triton_abi.AbiMismatch):
        triton_abi.read(META, source, ARGS)


@pytest.mark.parametrize(
    ("changed", "words"),
    [
        ({"global_scratch_size": 64}, "global scratch"),
        ({"num_ctas": 2}, "CTAs"),
        ({"cluster_dims": [2, 1, 1]}, "clusters"),
        ({"launch_pdl": True}, "programmatic"),
        ({"shared": 10**6}, "shared memory"),
    ],
)
def test_it_refuses_to_launch_what_this_harness_does_not_provide(changed: dict, words: str):
    with pytest.raises(triton_abi.Unsupported, match=words):
        triton_abi.read({**META, **changed}, GOOD, ARGS)


def test_a_forged_kernel_name_is_not_looked_up():
    with pytest.raises(triton_abi.AbiMismatch):
        triton_abi.read({**META, "name": "k(\n"}, GOOD, ARGS)


def test_it_passes_device_pointers_typed_scalars_and_null_scratch():
    abi = triton_abi.read(META, GOOD, ARGS)
    arrays = [SimpleNamespace(data=SimpleNamespace(ptr=4096)), SimpleNamespace(data=SimpleNamespace(ptr=8192))]
    flat = triton_abi.kernel_arguments(ARGS, [*arrays, 1000], abi)
    assert flat == (4096, 8192, 1000, 0, 0)
    assert [type(v) for v in flat] == [np.uint64, np.uint64, np.int32, np.uint64, np.uint64]
