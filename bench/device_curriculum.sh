# One device call for the curriculum's goals: calibrate (the roof goals read the slice's ceilings), then every
# sample case of the labs whose GPU targets are unchecked, newest first, with each goal's measured figure and
# the sweep's points (bench/curriculum_goals.py). Each row's `ok` is check-labs' test (the expected verdict
# and goals_met on cuda), so the JSON is also the labs' cuda table.
#
#     run(command="bash bench/device_curriculum.sh", carry=[".whl", ".deb"])   (bench/fetch_device_deps.sh first)
#
# Writes $OUT/calibration.json, $OUT/goals-new.json, $OUT/goals-unchecked.json and $OUT/stdout.txt; the
# timeouts add up to 580 s, under one command's 600. About 16 cases for the new labs and 20 for the
# unchecked ones, 10-25 s each: a section that runs out keeps the rows it wrote (written after every case).
source bench/device_setup.sh || exit 1
set -o pipefail
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache WARPLAB_KERNEL_CACHE=/tmp/warplab-cache/cupy-kernels
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,mig.mode.current,compute_mode --format=csv,noheader
    timeout 120 python3 -m gpu_worker calibrate --refresh --json > "$OUT/calibration.json"; echo "calibrate: rc=$?"
    timeout 240 python3 bench/curriculum_goals.py --backend cuda --out "$OUT/goals-new.json" \
        occupancy mixed-precision matmul-register-tiles; echo "goals (new labs): rc=$?"
    timeout 220 python3 bench/curriculum_goals.py --backend cuda --out "$OUT/goals-unchecked.json" \
        divergence reduction matmul-tiled coalescing transpose pointer-chase; echo "goals (unchecked): rc=$?"
} 2>&1 | tee "$OUT/stdout.txt"
