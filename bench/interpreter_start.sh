# What the sandboxed child's interpreter spends before its first line: run 28 counted 1.3 CPU seconds a spare on
# the GPU image (/opt/torch/.venv) against 0.2 s on the CPU machine. Run from the repository root, on the GPU
# machine (device step `startup`) or here; writes to stdout.
#
#     bash bench/interpreter_start.sh
#
# The child sees the interpreter's own site-packages and the repository on PYTHONPATH, nothing of /tmp/site
# (`isolation.sandbox`), so each reading here clears PYTHONPATH the same way.
set -u
python=${PYTHON:-python3}
child_env=(env -u PYTHONPATH PYTHONPATH="$PWD" PYTHONDONTWRITEBYTECODE=1)
# the sandbox's own BLAS variables (`isolation.sandbox.ONE_THREAD_BLAS`), as NAME=VALUE words
read -r -a one_thread_blas <<< "$("$python" -c 'from gpu_worker.isolation.sandbox import ONE_THREAD_BLAS as b
print(" ".join(f"{k}={v}" for k, v in b.items()))')"
# CPU seconds of one command (bash's own `time`: the image may have no /usr/bin/time)
timed() { local TIMEFORMAT="%U user + %S sys s"; { time "$@" > /dev/null 2>&1; } 2>&1; }
cpu() { timed "${child_env[@]}" "$python" "$@"; }
cpu_one_thread() { timed "${child_env[@]}" "${one_thread_blas[@]}" "$python" "$@"; }

echo "interpreter: $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])'), $(nproc) CPUs"
echo "== CPU of a bare start, with site and without it (-S: no .pth file runs)"
echo "python -c pass:     $(cpu -c pass)"
echo "python -S -c pass:  $(cpu -S -c pass)"
echo "python -I -c pass:  $(cpu -I -c pass)"
echo "the child's module: $(cpu -c 'import gpu_worker.isolation.child')"
echo "import numpy:       $(cpu -c 'import numpy')"
echo "import numpy, BLAS on one thread (the sandbox's ONE_THREAD_BLAS): $(cpu_one_thread -c 'import numpy')"
echo "the child's module, BLAS on one thread: $(cpu_one_thread -c 'import gpu_worker.isolation.child')"
echo "== .pth files the site module runs at every start"
"${child_env[@]}" "$python" - <<'PY'
import glob, site
for folder in site.getsitepackages():
    for path in sorted(glob.glob(folder + "/*.pth")):
        lines = [l.strip() for l in open(path, errors="replace") if l.strip() and not l.startswith("#")]
        imports = [l[:120] for l in lines if l.startswith(("import ", "import\t"))]
        print(f"{path}: {len(lines)} line(s)" + (f"; runs: {imports}" if imports else ""))
PY
echo "== the costliest imports of a start that imports the child's module (-X importtime, cumulative us)"
"${child_env[@]}" "$python" -X importtime -c 'import gpu_worker.isolation.child' 2>&1 \
    | grep '^import time:' | sort -t'|' -k2 -n | tail -25
