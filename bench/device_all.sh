# One device call for everything still to be measured: calibration with the kernel-cache seed,
# `pytest -m gpu`, the engine's vector-add table, and the pipeline (Redis, both Celery workers, jobs
# sent through Celery, events from the channel layer), cold spawns then spare sandboxes.
#
#     run(command="bash bench/device_all.sh", carry=[".whl", ".deb"])       (bench/fetch_device_deps.sh first)
source bench/device_setup.sh || exit 1
set -o pipefail
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache WARPLAB_KERNEL_CACHE=/tmp/warplab-cache/cupy-kernels
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,mig.mode.current,compute_mode --format=csv,noheader
    start=$(date +%s%N)
    python3 -m gpu_worker calibrate --refresh --json --warm-kernel-cache > "$OUT/calibration.json"
    echo "calibrate: rc=$? in $(( ($(date +%s%N) - start) / 1000000 )) ms; seed: $(ls $WARPLAB_KERNEL_CACHE | wc -l) file(s)"
    timeout 240 python3 bench/gpu_engine.py --sections env,engine_vector_add,pytest_gpu --out "$OUT/engine"
    echo "gpu_engine: rc=$?"
    timeout 150 python3 bench/pipeline.py --out "$OUT/default" --rounds 6 --deadline 100 --job-timeout 60; a=$?
    timeout 120 python3 bench/pipeline.py --spare 1 --rounds 6 --redis-port 6391 --deadline 80 --job-timeout 60 \
        --out "$OUT/spare"; b=$?
    echo "rc default=$a spare=$b"
    tar czf "$OUT/logs.tgz" -C "$OUT" default spare 2>/dev/null
} 2>&1 | tee "$OUT/stdout.txt"
