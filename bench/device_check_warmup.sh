# A short device call after run 16: Numba's compiler warmed in every spare (run 16's warm-up kernel
# could not compile and the spare hid it), the BF16 ceiling measured first and briefly, and the first
# job of a fresh worker sent at once and 5 s after it is ready.
#
#     run(command="bash bench/device_check_warmup.sh", carry=[".whl", ".deb"])
source bench/device_setup.sh || exit 1
set -o pipefail
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache WARPLAB_KERNEL_CACHE=/tmp/warplab-cache/cupy-kernels
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
    date -u +%FT%TZ
    for i in 1 2 3; do
        python3 -m gpu_worker calibrate --refresh --warm-kernel-cache 2>&1 | tail -7
        python3 -m gpu_worker calibrate --json > "$OUT/calibration-$i.json"
    done
    timeout 120 python3 bench/gpu_engine.py --sections cold_start,ceiling_probe --out "$OUT/engine"
    timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu_worker/test_gpu_kernel_cache.py 2>&1 | tail -3
    timeout 95 python3 bench/pipeline.py --rounds 2 --deadline 80 --job-timeout 60 --out "$OUT/now"; a=$?
    timeout 95 python3 bench/pipeline.py --rounds 2 --redis-port 6391 --deadline 80 --job-timeout 60 \
        --first-after 5 --out "$OUT/after5"; b=$?
    echo "rc now=$a after5=$b"
    grep -h "warmed up only in part" "$OUT"/*/services.log | head -3
    rm -f "$OUT"/*/services.log
} 2>&1 | tee "$OUT/stdout.txt"
