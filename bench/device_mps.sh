# MPS for real: WarpLab's engine in two or more workers, alone, time-sliced and as MPS clients, and the MIG state.
#
#     run(command="bash bench/device_mps.sh", carry=[".whl", ".deb"])   (bench/fetch_device_deps.sh first)
#     bash bench/device_mps.sh --dry-run                                 (no GPU: the simulator, no MPS daemon)
#
# Writes $OUT/mps.json, $OUT/mps.md, $OUT/mig_probe.json and $OUT/stdout.txt; commit the first two as
# bench/results/<date>-mps.{json,md}. The MPS control daemon is started here with private pipe and log
# folders under /tmp and is ALWAYS quit by the EXIT trap, however the script ends. MIG, clocks and the
# compute mode are never changed: bench/mig_probe.py only reads them.
set -u -o pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
DRY=""
[ "${1:-}" = "--dry-run" ] && DRY="--dry-run"
JOBS=${MPS_BENCH_JOBS:-8}
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache WARPLAB_KERNEL_CACHE=/tmp/warplab-cache/cupy-kernels
MPS_DIR=/tmp/warplab-mps-$$  # known to this shell and to the pipeline's subshell alike, so either can quit it
PY=python3
[ -n "$DRY" ] && [ -x .venv/bin/python ] && PY=.venv/bin/python

quit_mps() {  # idempotent: the subshell's trap, its explicit call and this shell's trap may all run it
    if [ -d "$MPS_DIR" ]; then
        echo quit | CUDA_MPS_PIPE_DIRECTORY="$MPS_DIR/pipe" CUDA_MPS_LOG_DIRECTORY="$MPS_DIR/log" nvidia-cuda-mps-control \
            && echo "mps: daemon quit"
        sleep 1
        cp "$MPS_DIR/log/control.log" "$OUT/mps-control.log" 2>/dev/null
        rm -rf "$MPS_DIR"
    fi
}
trap quit_mps EXIT
trap 'exit 143' TERM INT  # a timeout's signal still runs the EXIT trap

{
    trap quit_mps EXIT  # the pipeline's subshell does not inherit the trap above
    trap 'exit 143' TERM INT
    date -u +%FT%TZ
    if [ -z "$DRY" ]; then
        source bench/device_setup.sh || exit 1
        nvidia-smi --query-gpu=name,driver_version,mig.mode.current,compute_mode,clocks.sm --format=csv,noheader
    fi
    $PY bench/mig_probe.py --json "$OUT/mig_probe.json" | head -60
    dirs=()
    $PY bench/mps_bench.py run $DRY --out-dir /tmp/mps-alone --mode alone --jobs "$JOBS"; echo "alone: rc=$?"
    dirs+=(/tmp/mps-alone)
    $PY bench/mps_bench.py run $DRY --out-dir /tmp/mps-timeslice --mode timeslice --workers 2 --jobs "$JOBS"
    echo "timeslice: rc=$?"; dirs+=(/tmp/mps-timeslice)
    if [ -z "$DRY" ]; then
        mkdir -p "$MPS_DIR/pipe" "$MPS_DIR/log"
        export CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe CUDA_MPS_LOG_DIRECTORY=$MPS_DIR/log
        nvidia-cuda-mps-control -d && echo "mps: daemon started ($MPS_DIR)"
    fi
    for pcts in 50,50 70,30; do
        $PY bench/mps_bench.py run $DRY --out-dir "/tmp/mps-$pcts" --mode mps --percentages "$pcts" --jobs "$JOBS"
        echo "mps $pcts: rc=$?"; dirs+=("/tmp/mps-$pcts")
    done
    quit_mps
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    $PY bench/mps_bench.py report "${dirs[@]}" --out-dir "$OUT"
} 2>&1 | tee "$OUT/stdout.txt"
