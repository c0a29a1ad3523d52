# Module 6's sharing experiment on a real GPU: whole, time-sliced, and MPS at several active thread percentages.
#
#     run(command="bash bench/device_sharing.sh")              (needs only the image's python3 with CuPy)
#     bash bench/device_sharing.sh --dry-run                   (no GPU: CPU loops, no MPS daemon; checks the plumbing)
#
# Writes $OUT/sharing.json, $OUT/sharing.md and $OUT/stdout.txt; commit the first two as
# bench/results/<date>-sharing.{json,md}, which the module 6 lesson's figure reads.
# The MPS control daemon is started here with private pipe and log folders under /tmp and is ALWAYS
# quit by the EXIT trap, however the script ends. MIG, clocks and the compute mode are never touched.
set -u -o pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
DRY=""
[ "${1:-}" = "--dry-run" ] && DRY="--dry-run"
export PYTHONUNBUFFERED=1
MPS_DIR=""

quit_mps() {
    if [ -n "$MPS_DIR" ]; then
        echo quit | CUDA_MPS_PIPE_DIRECTORY="$MPS_DIR/pipe" CUDA_MPS_LOG_DIRECTORY="$MPS_DIR/log" nvidia-cuda-mps-control \
            && echo "mps: daemon quit"
        sleep 1
        rm -rf "$MPS_DIR"
        MPS_DIR=""
    fi
}
trap quit_mps EXIT

{
    date -u +%FT%TZ
    if [ -z "$DRY" ]; then
        nvidia-smi --query-gpu=name,driver_version,mig.mode.current,compute_mode --format=csv,noheader
        python3 bench/sharing_bench.py run --out-dir /tmp/sharing-plain --modes whole,timeslice
        echo "plain: rc=$?"
        MPS_DIR=$(mktemp -d /tmp/warplab-mps.XXXXXX)
        mkdir -p "$MPS_DIR/pipe" "$MPS_DIR/log"
        export CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe CUDA_MPS_LOG_DIRECTORY=$MPS_DIR/log
        nvidia-cuda-mps-control -d && echo "mps: daemon started ($MPS_DIR)"
        python3 bench/sharing_bench.py run --out-dir /tmp/sharing-mps --modes mps --mps-percentages 100,50,25
        echo "mps: rc=$?"
        quit_mps
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
        python3 - <<'EOF'
import json, sys
sys.path.insert(0, "bench")
import sharing_bench as sb
plain, mps = (json.load(open(f"/tmp/sharing-{n}/sharing.json")) for n in ("plain", "mps"))
plain["scenarios"] += mps["scenarios"]
plain["summary"] = sb.summarise(plain["scenarios"])
out = __import__("os").environ.get("OUT", "/tmp/out")
open(f"{out}/sharing.json", "w").write(json.dumps(plain, indent=1) + "\n")
open(f"{out}/sharing.md", "w").write(sb.markdown(plain))
print(sb.markdown(plain))
EOF
    else
        python3 bench/sharing_bench.py run --dry-run --seconds 0.5 --out-dir "$OUT" --modes whole,timeslice,mps
        echo "dry run: rc=$?"
    fi
} 2>&1 | tee "$OUT/stdout.txt"
