# One device call, GPU side: calibration, the engine's vector-add table, `pytest -m gpu`, ncu against the simulator.
#
#     run(command="bash bench/device_gpu.sh", carry=[".whl", ".deb"])       (bench/fetch_device_deps.sh first)
#
# Brings back at most 8 files: stdout.txt, calibration.json, engine/results.{md,json},
# ncu-vs-sim.{md,json} and raw.tgz (ncu's own CSV logs, for the parser's fixtures).
source bench/device_setup.sh || exit 1
set -o pipefail
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache WARPLAB_NCU_KEEP=/tmp/ncu-keep
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/ncu-keep
{
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,mig.mode.current,compute_mode --format=csv,noheader
    start=$(date +%s%N)
    python3 -m gpu_worker calibrate --refresh --json > "$OUT/calibration.json"
    echo "calibrate: rc=$? in $(( ($(date +%s%N) - start) / 1000000 )) ms"
    python3 bench/gpu_engine.py --sections env,engine_vector_add,pytest_gpu --out "$OUT/engine"
    echo "gpu_engine: rc=$?"
    python3 bench/ncu_vs_sim.py --side gpu --out /tmp/ncu-vs-sim
    echo "ncu_vs_sim: rc=$?"
    cp /tmp/ncu-vs-sim/ncu-vs-sim.md /tmp/ncu-vs-sim/ncu-vs-sim.json "$OUT/"
    tar czf "$OUT/raw.tgz" -C /tmp ncu-keep ncu-vs-sim
} 2>&1 | tee "$OUT/stdout.txt"
