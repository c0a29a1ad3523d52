# A short device call: after the UUID fix the engine finds the worker's calibration, so results carry
# "% of the slice's ceiling"; vector-add and the strided coalescing sample through the CLI, with ncu.
#
#     run(command="bash bench/device_check_ceilings.sh", carry=[".whl", ".deb"])
source bench/device_setup.sh || exit 1
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache WARPLAB_KERNEL_CACHE=/tmp/warplab-cache/cupy-kernels
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
    date -u +%FT%TZ
    python3 -m gpu_worker calibrate --warm-kernel-cache | tail -8
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu_worker/test_gpu_device_identity.py 2>&1 | tail -2
    lab=labs/content/02-three-rules/coalescing/tests
    for spec in "vector-add cuda labs/content/01-silicon/vector-add/reference.cu" \
                "coalescing cuda $lab/strided-cuda/submission.cu" \
                "coalescing cuda labs/content/02-three-rules/coalescing/reference.cu"; do
        set -- $spec
        name=$1-$(basename "$(dirname "$3")")-$(basename "$3")
        python3 -m gpu_worker run --exercise "$1" --language "$2" --source "$3" --backend cuda > "$OUT/$name.json"
        python3 - "$OUT/$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[1].split('/')[-1]}: {r['verdict']} on {r['device']}")
for m in (r.get("metrics") or {}).get("sizes", []):
    print("  ", m["sizes"], m["verdict"])
p = r.get("profile") or {}
print("   ncu:", p.get("available"), p.get("reason", ""))
for line in p.get("explanations", [])[:6]:
    print("     -", line)
PY
    done
} 2>&1 | tee "$OUT/stdout.txt"
