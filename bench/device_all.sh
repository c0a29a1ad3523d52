# One device call for everything still to be measured: calibration with the kernel-cache seed,
# `pytest -m gpu`, the engine's vector-add table, fresh-process start-up costs, the ceilings measured
# other ways (bench/ceiling_probe.py), and the pipeline (Redis, both Celery workers, jobs sent through
# Celery, events from the channel layer), a cold child per job, then the default: spare sandboxes.
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
    timeout 300 python3 bench/gpu_engine.py --sections env,ceiling_probe,cold_start,engine_vector_add,pytest_gpu --out "$OUT/engine"
    echo "gpu_engine: rc=$?"
    timeout 130 python3 bench/pipeline.py --spare 0 --out "$OUT/cold" --rounds 6 --deadline 90 --job-timeout 60; a=$?
    timeout 110 python3 bench/pipeline.py --rounds 6 --redis-port 6391 --deadline 80 --job-timeout 60 \
        --out "$OUT/default"; b=$?
    echo "rc cold=$a default=$b"
    tar czf "$OUT/logs.tgz" -C "$OUT" cold default 2>/dev/null
} 2>&1 | tee "$OUT/stdout.txt"
