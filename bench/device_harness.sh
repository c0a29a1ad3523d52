# The trusted harness on the H200, in two device calls (each well under the 10-minute limit):
#
#     run(command="bash bench/device_harness.sh tests", carry=[".whl", ".deb"])   # calibration, pytest -m gpu
#     run(command="bash bench/device_harness.sh load",  carry=[".whl", ".deb"])   # timing quality, throughput
#
# `tests`: calibration (clock-scaled health), then every `gpu` test (the cheats, the compile process, device
# checks and the launch guard included). `load`: the timing-stability table (CV, do_bench side by side),
# then the pipeline through Celery with 4 workers on the one GPU and 8 learners submitting at once.
source bench/device_setup.sh || exit 1
set -o pipefail
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache WARPLAB_KERNEL_CACHE=/tmp/warplab-cache/cupy-kernels
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
what=${1:-tests}
{
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,mig.mode.current,compute_mode,power.limit --format=csv,noheader
    start=$(date +%s%N)
    python3 -m gpu_worker calibrate --refresh --json --warm-kernel-cache > "$OUT/calibration.json"
    echo "calibrate: rc=$? in $(( ($(date +%s%N) - start) / 1000000 )) ms"
    python3 -m gpu_worker calibrate
    if [ "$what" = all ]; then  # one call for a short budget: the harness's own GPU tests, then the load
        timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE --durations=10 -o addopts="-p tests.env_plugin" \
            tests/gpu_worker/test_gpu_a_kernel_cannot_fool_the_timer.py tests/gpu_worker/test_gpu_engine.py \
            tests/gpu_worker/test_gpu_backend.py tests/gpu_worker/test_gpu_kernel_cache.py \
            tests/gpu_worker/test_gpu_timing.py tests/gpu_worker/attacks/test_attack_gpu.py \
            tests/gpu_worker/test_gpu_triton.py 2>&1 | tee "$OUT/pytest-gpu.txt"
        echo "pytest: rc=$?"
        timeout 170 python3 bench/pipeline.py --workers 4 --learners 8 --load-seconds 60 --rounds 1 \
            --deadline 30 --job-timeout 40 --out "$OUT/load"; echo "pipeline: rc=$?"
        tar czf "$OUT/logs.tgz" -C "$OUT" load 2>/dev/null
    elif [ "$what" = tests ]; then
        timeout 470 python3 -m pytest -m gpu tests/gpu_worker -q -p no:cacheprovider -rfE --durations=15 \
            -o addopts="-p tests.env_plugin" 2>&1 | tee "$OUT/pytest-gpu.txt"
        echo "pytest: rc=$?"
    else
        timeout 150 python3 bench/gpu_engine.py --sections stability --out "$OUT/engine"; echo "stability: rc=$?"
        timeout 300 python3 bench/pipeline.py --workers 4 --learners 8 --load-seconds 90 --rounds 2 \
            --deadline 60 --job-timeout 60 --out "$OUT/load"; echo "pipeline: rc=$?"
        tar czf "$OUT/logs.tgz" -C "$OUT" load engine 2>/dev/null
    fi
} 2>&1 | tee "$OUT/stdout.txt"
