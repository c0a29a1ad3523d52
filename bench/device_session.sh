# A short device budget spent in few calls: the owed GPU steps run in the order given, each under its own
# ceiling and under what is left of the call's budget, so the call always ends before the tool's 10 minutes.
#
#     run(command="bash bench/device_session.sh 570 tests pipeline", carry=[".whl", ".deb"])
#     run(command="bash bench/device_session.sh 570 goals-new mps stability goals-old", carry=[".whl", ".deb"])
#     run(command="bash bench/device_session.sh 240 ladder", carry=[".whl", ".deb"])
#     run(command="bash bench/device_session.sh 320 check-labs-ncu", carry=[".whl", ".deb"])
#
# Steps: trace (bench/engine_trace.py: vector-add's references, a clock on every event), trace-cold (the cuda
# one with an empty kernel-cache seed), tests (every `gpu` test, each under pytest-timeout's TEST_TIMEOUT, 90 s),
# files (each gpu test file in its own pytest, TEST_TIMEOUT 60 s by the thread method, which prints every
# thread's stack and exits, with the process tree logged every 20 s to ps.log), pytest (PYTEST_ARGS, the same way),
# pipeline (4 workers, 8 learners through Celery), pipeline8 (8 workers, 8 learners, 3 rounds one at a time first;
# pipeline8-unique: no two sources alike; pipeline8-checks-alone: correctness work takes the GPU lock
# exclusively instead of shared (WARPLAB_CHECKS_ALONE=1); pipeline8-before: checks beside timings, as before the shared GPU lock;
# pipeline8-teardown-behind: a GPU job's child ends behind its worker, which takes the next job at its verdict
# (WARPLAB_TEARDOWN_BEHIND=1); pipeline8-warm-compiler: every spare warms the learner's compile process, as before `spare.wants_compiler`;
# pipeline8-more-workers: the same 8 learners on 10 workers (a learner's next submit finds a free worker while
# the one that judged its last job finishes that job's tail);
# pipeline8-baseline: pipeline8 on the tree in baseline.tar, `git archive COMMIT -o baseline.tar`, carried too),
# check-labs (every lab's samples on the GPU, 4 side by side; each case with its goals measured in
# check-labs-cuda.json, copied to $OUT: bench/goals_table.py's input), check-labs-ncu (the same with --ncu-goals:
# each accepted case of an exercise with memory-access goals also launched once under Nsight Compute, its figures
# in check-labs-cuda-ncu.json, copied to $OUT even when the ceiling stops the run, since check-labs rewrites it as
# each case ends; ncu's raw CSVs kept in $WORK/ncu-logs), stability (timing CV and
# do_bench side by side), goals-new / goals-old (bench/curriculum_goals.py), mps (bench/device_mps.sh, whose
# trap always quits its MPS daemon), ladder (bench/softmax_ladder.py, module 4's softmax at every rung, into
# $WORK/ladder, its JSON and table copied to $OUT), child-profile (bench/child_profile.py: warm vector-add jobs, each
# sandbox's CPU seconds and its measuring child's cProfile, child-profile.md copied to $OUT), startup (bench/interpreter_start.sh: what the sandboxed child's interpreter
# spends before its first line, with BLAS on one thread and without), ncu-metrics (does this ncu know the SASS
# counters that would judge active lanes per memory request on a GPU), ncu-lanes (the divergence and
# mixed-precision samples' active lanes per request from ncu's SASS source page, each beside the CPU tier's
# figure, bench/lanes_side_by_side.py; the raw source-page CSVs and both JSONs in $OUT/ncu-lanes.tgz). The first
# argument is the call's budget in seconds. A step is skipped
# when less than its floor is left. Everything is written under /tmp/session and packed after every step into
# $OUT/session.tgz, beside $OUT/stdout.txt and $OUT/calibration.json (the tool brings back 8 files at most).
source bench/device_setup.sh || exit 1
set -o pipefail
export PYTHONUNBUFFERED=1 WARPLAB_CACHE_DIR=/tmp/warplab-cache WARPLAB_KERNEL_CACHE=/tmp/warplab-cache/cupy-kernels
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
WORK=/tmp/session; mkdir -p "$WORK"
END=$(( $(date +%s) + ${1:?budget in seconds} )); shift

left() { echo $(( END - $(date +%s) )); }
# the load every pipeline8 step puts on the GPU: 8 workers, 8 learners for 75 s, 3 rounds one at a time first
# (a later --rounds or --deadline overrides: argparse keeps the last)
LOAD8=(python3 bench/pipeline.py --workers 8 --learners 8 --load-seconds 75 --rounds 3 --deadline 40 --job-timeout 40)
# the gpu test files, the ones that failed or hung in run 19 first
GPU_TEST_FILES="${GPU_TEST_FILES:-tests/gpu_worker/test_gpu_engine.py tests/gpu_worker/attacks/test_attack_gpu.py
    tests/gpu_worker/test_gpu_kernel_cache.py tests/gpu_worker/test_gpu_timing.py tests/gpu_worker/test_gpu_triton.py
    tests/gpu_worker/test_occupancy_matches_the_driver.py tests/gpu_worker/test_gpu_profile.py
    tests/gpu_worker/test_gpu_backend.py tests/gpu_worker/test_gpu_device_identity.py
    tests/gpu_worker/test_multi_gpu_jobs.py tests/gpu_worker/test_gpu_a_kernel_cannot_fool_the_timer.py
    tests/gpu_worker/test_gpu_block_size_sweep.py}"
# every 20 s, the process tree and the GPU's processes, for reading a hang afterwards
watch_processes() {
    while sleep 20; do
        { date -u +%T; ps -eo pid,ppid,stat,etime,wchan:24,args --forest | grep -v "ps -eo" | cut -c1-220
          nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader; } >> "$WORK/ps.log" 2>&1
    done
}
pack() { tar czf "$OUT/session.tgz" -C "$WORK" . 2>/dev/null; }
# step NAME CEILING FLOOR COMMAND...: run COMMAND under min(CEILING, what is left - 15 s for packing)
step() {
    local name=$1 ceiling=$2 floor=$3; shift 3
    local budget=$(( $(left) - 15 )); (( budget > ceiling )) && budget=$ceiling
    if (( budget < floor )); then echo "== $name: skipped ($(left) s left, needs $floor)"; return; fi
    echo "== $name: up to $budget s"
    local t0=$SECONDS
    timeout -s TERM -k 10 "$budget" "$@"; echo "== $name: rc=$? in $(( SECONDS - t0 )) s"
    pack
}

{
    date -u +%FT%TZ; git log -1 --format='commit %h %s' 2>/dev/null
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,mig.mode.current,compute_mode,power.limit \
        --format=csv,noheader
    step calibrate 120 30 sh -c 'python3 -m gpu_worker calibrate --refresh --json --warm-kernel-cache \
        > '"$OUT"'/calibration.json && python3 -m gpu_worker calibrate'
    for what in "$@"; do
        case $what in
            trace) step trace-cuda 75 40 python3 bench/engine_trace.py vector-add cuda --after 25
                   step trace-numba 75 40 python3 bench/engine_trace.py vector-add numba --after 25 ;;
            trace-cold) mkdir -p /tmp/empty-seed  # the same job with no seeded kernels: what the seed saves
                   step trace-cold 75 40 env WARPLAB_KERNEL_CACHE=/tmp/empty-seed \
                       python3 bench/engine_trace.py vector-add cuda --after 25 ;;
            files) watch_processes > /dev/null 2>&1 & watcher=$!  # each gpu test file in a pytest of its own: a hang stops one file only
                   for f in $GPU_TEST_FILES; do
                       step "$(basename "$f" .py)" 150 40 python3 -m pytest -m gpu "$f" -v -p no:cacheprovider -rfE \
                           --timeout="${TEST_TIMEOUT:-60}" --timeout-method=thread -o addopts="-p tests.env_plugin" \
                           --junitxml="$WORK/junit-$(basename "$f" .py).xml"
                   done
                   kill "$watcher" 2>/dev/null ;;
            pytest) step pytest 200 40 python3 -m pytest -m gpu $PYTEST_ARGS -v -p no:cacheprovider -rfE \
                       --timeout="${TEST_TIMEOUT:-60}" --timeout-method=thread -o addopts="-p tests.env_plugin" ;;
            tests) step tests 420 120 python3 -m pytest -m gpu tests/gpu_worker -v -p no:cacheprovider -rfE \
                --timeout="${TEST_TIMEOUT:-90}" --durations=20 -o addopts="-p tests.env_plugin" \
                --junitxml="$WORK/pytest-gpu.xml" ;;
            pipeline) step pipeline 200 150 python3 bench/pipeline.py --workers 4 --learners 8 --load-seconds 75 \
                --rounds 1 --deadline 30 --job-timeout 40 --out "$WORK/load" ;;
            pipeline8) step pipeline8 200 150 "${LOAD8[@]}" --out "$WORK/load8" ;;
            pipeline8-before) step pipeline8-before 200 150 "${LOAD8[@]}" --checks-beside-timings --out "$WORK/load8b" ;;
            pipeline8-baseline)  # the same load on another commit's tree, for a side by side on this very GPU
                if [ -f baseline.tar ]; then
                    rm -rf .baseline && mkdir .baseline && tar xf baseline.tar -C .baseline
                    step pipeline8-baseline 200 150 env -C .baseline "${LOAD8[@]}" --out "$WORK/load8-baseline"
                else echo "== pipeline8-baseline: no baseline.tar carried"; fi ;;
            pipeline8-more-workers) step pipeline8-more-workers 200 150 "${LOAD8[@]}" --workers 10 \
                --out "$WORK/load8-10w" ;;
            pipeline8-checks-alone) step pipeline8-checks-alone 200 150 env WARPLAB_CHECKS_ALONE=1 "${LOAD8[@]}" \
                --out "$WORK/load8-alone" ;;
            pipeline8-teardown-behind) step pipeline8-teardown-behind 200 150 env WARPLAB_TEARDOWN_BEHIND=1 \
                "${LOAD8[@]}" --out "$WORK/load8-behind" ;;
            pipeline8-warm-compiler) step pipeline8-warm-compiler 200 150 env WARPLAB_SPARE_COMPILER=always \
                "${LOAD8[@]}" --out "$WORK/load8w" ;;
            pipeline8-unique) step pipeline8-unique 200 150 "${LOAD8[@]}" --rounds 1 --deadline 30 --unique-sources \
                --out "$WORK/load8u" ;;
            check-labs) step check-labs 240 90 sh -c 'python3 -m gpu_worker check-labs --backend cuda --jobs 4 \
                --json '"$WORK"'/check-labs-cuda.json > '"$WORK"'/check-labs-cuda.txt 2>&1; rc=$?
                cp '"$WORK"'/check-labs-cuda.json '"$OUT"'/ 2>/dev/null; tail -40 '"$WORK"'/check-labs-cuda.txt; exit $rc' ;;
            check-labs-ncu)  # one ncu launch per case, only its goals' counters; 4 cases side by side as above
                step check-labs-ncu 500 150 env WARPLAB_NCU_KEEP="$WORK/ncu-logs" sh -c 'python3 -m gpu_worker \
                    check-labs --backend cuda --jobs 4 --ncu-goals --json '"$WORK"'/check-labs-cuda-ncu.json \
                    > '"$WORK"'/check-labs-cuda-ncu.txt 2>&1; rc=$?; tail -60 '"$WORK"'/check-labs-cuda-ncu.txt; exit $rc'
                cp "$WORK/check-labs-cuda-ncu.json" "$OUT/" 2>/dev/null ;;  # after the step: also when its ceiling stopped it
            startup) step startup 60 20 sh -c 'bash bench/interpreter_start.sh | tee '"$WORK"'/interpreter-start.txt' ;;
            ncu-metrics)  # whether this ncu knows the SASS counters of active lanes per memory instruction (issue 28)
                step ncu-metrics 60 20 sh -c 'ncu=$(python3 -c "from gpu_worker.measurement.ncu import find_ncu, real_ncu; \
                    n = find_ncu(); print(real_ncu(n) if n else \"\")"); echo "ncu: $ncu"; [ -n "$ncu" ] && \
                    "$ncu" --query-metrics --chip gh100 | tee '"$WORK"'/ncu-metrics.txt | grep -E \
                    "smsp__sass_(thread_)?inst_executed_op_global_(ld|st)(_pred_on)?|smsp__thread_inst_executed_per_inst"' ;;
            ncu-lanes)  # lanes_per_request under ncu's source counters (issue 28): the CPU tier beside, on the host's CPUs
                step ncu-lanes 120 60 env WARPLAB_NCU_KEEP="$WORK/ncu-lanes" sh -c 'labs="--lab divergence --lab mixed-precision"
                    python3 -m gpu_worker check-labs --backend sim --jobs 4 $labs --json '"$WORK"'/lanes-sim.json \
                        > '"$WORK"'/lanes-sim.txt 2>&1 & sim=$!
                    python3 -m gpu_worker check-labs --backend cuda --jobs 4 --ncu-goals $labs \
                        --json '"$WORK"'/lanes-cuda.json > '"$WORK"'/lanes-cuda.txt 2>&1; rc=$?; wait $sim
                    tail -30 '"$WORK"'/lanes-cuda.txt
                    python3 bench/lanes_side_by_side.py '"$WORK"'/lanes-sim.json '"$WORK"'/lanes-cuda.json; exit $rc'
                mkdir -p "$WORK/ncu-lanes"  # after the step: the pages kept so far also when its ceiling stopped it
                tar czf "$OUT/ncu-lanes.tgz" -C "$WORK" ncu-lanes $(cd "$WORK" && ls lanes-*.json lanes-*.txt 2>/dev/null) ;;
            child-profile) step child-profile 90 40 sh -c 'python3 bench/child_profile.py --out '"$WORK"'/child-profile \
                && cp '"$WORK"'/child-profile/child-profile.md '"$OUT"'/' ;;
            stability) step stability 130 60 python3 bench/gpu_engine.py --sections stability --out "$WORK/engine" ;;
            goals-new) step goals-new 220 60 python3 bench/curriculum_goals.py --backend cuda \
                --out "$WORK/goals-new.json" occupancy mixed-precision matmul-register-tiles ;;
            goals-old) step goals-old 220 60 python3 bench/curriculum_goals.py --backend cuda \
                --out "$WORK/goals-old.json" divergence reduction matmul-tiled coalescing transpose pointer-chase ;;
            ladder) step ladder 90 45 sh -c 'python3 bench/softmax_ladder.py --out-dir '"$WORK"'/ladder \
                && cp '"$WORK"'/ladder/softmax-ladder.json '"$WORK"'/ladder/softmax-ladder.md '"$OUT"'/' ;;
            mps) step mps 240 120 env OUT="$WORK/mps" MPS_BENCH_JOBS=6 bash bench/device_mps.sh ;;
            *) echo "== $what: unknown step" ;;
        esac
    done
    echo "== done with $(left) s of the call's budget left"
} 2>&1 | tee "$WORK/stdout.txt"
cp "$WORK/stdout.txt" "$OUT/stdout.txt"; pack
