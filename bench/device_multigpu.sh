#!/usr/bin/env bash
# One device call on a multi-GPU kind: NCCL's all-reduce, all-gather, reduce-scatter and broadcast, busbw
# against size, measured beside the alpha-beta model (bench/nccl_bench.py). Needs no carried wheels: CuPy
# (or PyTorch), NumPy and nvidia-smi are the image's own; the model is gpu_worker.multigpu (standard library).
#
#     run(command="bash bench/device_multigpu.sh", kind="nvidia-h200-x2")     # or -x4, -x8
#
# Brings back stdout.txt, nccl-bench.md, nccl-bench.json and nccl-bench-figure.json (when plotly imports).
# On a one-GPU machine it says so, writes the model table alone and exits 3: nothing is measured.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
    date -u +%FT%TZ
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader
    nvidia-smi topo -m
    python3 -c "import cupy; from cupy.cuda import nccl; print('cupy', cupy.__version__, 'nccl', nccl.get_version())" \
        || echo "CuPy's NCCL is not importable: the bench falls back to torch.distributed"
    python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" || echo "no PyTorch"
    timeout 540 python3 bench/nccl_bench.py --out "$OUT" "$@"
    echo "nccl_bench: rc=$?"
} 2>&1 | tee "$OUT/stdout.txt"
