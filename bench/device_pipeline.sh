# One device call, the whole pipeline: Redis, the web-queue worker, the GPU worker, jobs through Celery.
#
#     run(command="bash bench/device_pipeline.sh", carry=[".whl", ".deb"])
#
# The GPU worker calibrates when it starts (cached after the first start, so the second start shows the
# cold start a restarted worker has); then the default run (cold spawns) and one with spare sandboxes.
source bench/device_setup.sh || exit 1
set -o pipefail
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
    python3 bench/pipeline.py --out "$OUT/default" --deadline 150 --job-timeout 60; a=$?
    python3 bench/pipeline.py --spare 1 --rounds 5 --redis-port 6391 --deadline 80 --job-timeout 60 --out "$OUT/spare"; b=$?
    echo "rc default=$a spare=$b"
} 2>&1 | tee "$OUT/stdout.txt"
