"""Tensor cores, asynchronous copies, warp match and textures are refused by opcode and line, never run wrongly:
the CPU tier's message says 'not supported by the CPU tier's executor: <opcode> (...) at line N'."""

from __future__ import annotations

import numpy as np
import pytest
from lab_cases import cuda_ptx
from ptx_factories import kernel, run

from gpu_worker.backends import ptx_sim
from gpu_worker.protocol import ArgSpec
from gpu_worker.ptx.refused import Refused

OUT = ".param .u64 k_param_0"


@pytest.mark.parametrize(
    "instruction",
    [
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r3}, "
        "{%f5, %f6, %f7, %f8}",
        "wgmma.fence.sync.aligned",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5]",
        "cp.async.commit_group",
        "match.any.sync.b32 %r1, %r2, %r3",
        "tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1}]",
    ],
)
def test_an_instruction_of_a_unit_the_executor_does_not_model_is_refused_by_opcode_and_line(instruction: str):
    body = f"\t.loc\t1 7 3\n\t{instruction};\n\tret;"
    with pytest.raises(Refused) as caught:
        run(kernel("k", OUT, body), ["out"], [np.zeros(1, np.uint32)], (1, 1, 1), (1, 1, 1))
    opcode = instruction.split()[0]
    assert caught.value.located().startswith(f"not supported by the CPU tier's executor: `{opcode}` (")
    assert caught.value.located().endswith(" at line 7")


SOURCES = {
    "tensor_cores": (
        "wmma.load.a.sync",
        r"""
        #include <mma.h>
        using namespace nvcuda;
        extern "C" __global__ void tensor_cores(const half* a, float* c) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
            wmma::fill_fragment(fc, 0.0f);
            wmma::load_matrix_sync(fa, a, 16);
            wmma::load_matrix_sync(fb, a, 16);
            wmma::mma_sync(fc, fa, fb, fc);
            wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
        }
        """,
    ),
    "matcher": (
        "match.any.sync.b32",
        r"""
        extern "C" __global__ void matcher(const int* a, int* out) {
            int i = threadIdx.x;
            out[i] = __match_any_sync(0xffffffff, a[i]);
        }
        """,
    ),
    "copier": (
        "cp.async.ca.shared.global",
        r"""
        #include <cuda_pipeline.h>
        extern "C" __global__ void copier(const float* a, float* out) {
            __shared__ float tile[256];
            __pipeline_memcpy_async(&tile[threadIdx.x], &a[threadIdx.x], sizeof(float));
            __pipeline_commit();
            __pipeline_wait_prior(0);
            __syncthreads();
            out[threadIdx.x] = tile[threadIdx.x] * 2.0f;
        }
        """,
    ),
}


@pytest.mark.parametrize("entry", sorted(SOURCES))
def test_nvcc_s_tensor_core_match_and_async_copy_kernels_are_not_run_and_the_learner_is_told_where(entry: str):
    opcode, source = SOURCES[entry]
    ptx = cuda_ptx(source)
    assert ptx is not None
    args = [
        ArgSpec(name="a", dtype="float32", role="in", shape=["n"]),
        ArgSpec(name="out", dtype="float32", role="out", shape=["n"]),
    ]
    found = ptx_sim.prepare(ptx, entry, "cuda", args)
    assert isinstance(found, str)
    assert found.startswith(f"not supported by the CPU tier's executor: `{opcode}")
    line = int(found.rsplit(" at line ", 1)[1])
    assert opcode.split(".")[0] in source.splitlines()[line - 1] or "(" in source.splitlines()[line - 1]
