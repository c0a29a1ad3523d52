#!/usr/bin/env bash
# Runs bench/load_ws.py against a private lab on loopback: Daphne on 127.0.0.1:$PORT, the web-queue worker
# and one sim worker, on PostgreSQL database warplab_bench and Redis database 3 with their own prefixes.
# Everything it starts is stopped at the end (trap). Usage: bench/run_load_ws.sh OUT.json [load_ws.py args]
# WS_CONNECT_TIMEOUT: Daphne's WebSocket handshake timeout (its default, 5 s, unless set).
# ASGI_APP: the application Daphne serves (default labsite.asgi:application; bench.asgi_auth_stack:application
# is the WebSocket stack as it was, for side-by-side runs).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?results file}; shift
PORT=${PORT:-8765}
PY=.venv/bin/python
LOGS=.run/bench-load-ws; mkdir -p "$LOGS"
export DEBUG=0 SECRET_KEY=bench-only-$(date +%s) LOG_LEVEL=WARNING DJANGO_SETTINGS_MODULE=labsite.settings
export DATABASE_URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/warplab_bench}
export REDIS_URL=redis://127.0.0.1:6379/3 CHANNELS_PREFIX=warplab-bench WARPLAB_BROKER_PREFIX=warplab-bench-
export ALLOWED_HOSTS=127.0.0.1,localhost WARPLAB_RUNS_PER_MINUTE=1000 WARPLAB_QUEUE_CAP=0
psql "${DATABASE_URL%/*}/postgres" -qc "DROP DATABASE IF EXISTS warplab_bench" -c "CREATE DATABASE warplab_bench"
"$PY" manage.py migrate --noinput -v0
"$PY" manage.py sync_labs >/dev/null
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
"$PY" -m daphne --websocket_connect_timeout "${WS_CONNECT_TIMEOUT:-5}" -b 127.0.0.1 -p "$PORT" "${ASGI_APP:-labsite.asgi:application}" >"$LOGS/web.log" 2>&1 & PIDS+=($!)
.venv/bin/celery -A labsite worker -Q web -P solo -n bench-web@%h --without-gossip --without-mingle \
  --loglevel WARNING >"$LOGS/worker-web.log" 2>&1 & PIDS+=($!)
env -i PATH="$PATH" HOME="$HOME" WARPLAB_BROKER_URL=$REDIS_URL WARPLAB_BROKER_PREFIX=$WARPLAB_BROKER_PREFIX \
  WARPLAB_POOL=sim WARPLAB_BACKEND=sim PYTHONUNBUFFERED=1 "$PY" -m gpu_worker serve >"$LOGS/worker-sim.log" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/accounts/login/" && break; sleep 0.3; done
for _ in $(seq 100); do grep -q "ready" "$LOGS/worker-sim.log" && break; sleep 0.5; done
"$PY" bench/load_ws.py --url "http://127.0.0.1:$PORT" --out "$OUT" "$@"
