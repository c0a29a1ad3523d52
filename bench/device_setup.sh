# The setup step of a device command: the carried wheels and Debian packages, installed under /tmp.
#
#     source bench/device_setup.sh && python3 bench/pipeline.py --out "$OUT"
#
# Needs `.whl` and `.deb` carried (see bench/pipeline.py). Prints one line per step and, when sourced,
# leaves PYTHONPATH, PATH, LD_LIBRARY_PATH and WARPLAB_SANDBOX_BINDS exported; a failed step returns 1.
#
# The web side (Django, Channels, Celery) imports from /tmp/site through PYTHONPATH. The sandboxed job
# child does not: bwrap gives it a private /tmp and an explicit environment, so it sees only the
# interpreter's own site-packages. The few wheels it imports (pydantic and its needs) are therefore also
# installed there, as the earlier GPU runs did (docs/benchmarks.md); NumPy, Numba, CuPy and PyYAML are
# the image's own.

_warplab_setup() {
    local python=${PYTHON:-python3}
    local site=/tmp/site debs=/tmp/warplab-debs fallback=/tmp/warplab-debs-fallback
    local f wheels missing

    [ -d .whl ] && [ -d .deb ] || { echo "setup: .whl and .deb must be carried (run from the repo root)"; return 1; }

    wheels=$(ls .whl/pydantic-*.whl .whl/pydantic_core-*.whl .whl/annotated_types-*.whl \
        .whl/typing_inspection-*.whl .whl/typing_extensions-*.whl)
    # shellcheck disable=SC2086  # one word per wheel
    # compiled to bytecode (pip's default) as an image's install is: the sandboxed child can write none, and
    # without it every child compiled pydantic's modules from source (up to run 26)
    PYTHONPATH= "$python" -m pip install -q --no-index --no-deps --no-cache-dir --upgrade $wheels \
        || { echo "setup: pip install of the sandbox child's wheels failed"; return 1; }
    "$python" -m compileall -q gpu_worker || { echo "setup: compileall gpu_worker failed"; return 1; }
    PYTHONPATH= "$python" -c "import pydantic" \
        || { echo "setup: the interpreter cannot import pydantic without PYTHONPATH"; return 1; }
    echo "setup: pydantic $(PYTHONPATH= "$python" -c 'import pydantic; print(pydantic.VERSION)') in $("$python" -c 'import sys; print(sys.prefix)') for the sandboxed child"

    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .whl/*.whl \
        || { echo "setup: pip install into $site failed"; return 1; }
    export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
    echo "setup: $(ls .whl/*.whl | wc -l) wheels installed into $site (PYTHONPATH)"

    rm -rf "$debs" "$fallback" && mkdir -p "$debs" "$fallback"
    for f in .deb/*.deb; do
        case $(basename "$f") in
            libatomic1_*) dpkg -x "$f" "$fallback" ;;  # the image's own (newer) one is used if it has one
            *) dpkg -x "$f" "$debs" ;;
        esac || { echo "setup: dpkg -x $f failed"; return 1; }
    done
    export PATH=$debs/usr/bin:$PATH
    export LD_LIBRARY_PATH=$debs/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "setup: $(ls .deb/*.deb | wc -l) Debian packages unpacked into $debs (PATH, LD_LIBRARY_PATH)"

    missing=$(ldd "$debs/usr/bin/redis-server" "$debs/usr/bin/bwrap" | grep "not found" | sort -u)
    if [ -n "$missing" ]; then
        export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$fallback/usr/lib/x86_64-linux-gnu
        missing=$(ldd "$debs/usr/bin/redis-server" "$debs/usr/bin/bwrap" | grep "not found" | sort -u)
    fi
    [ -z "$missing" ] || { echo "setup: libraries still missing: $missing"; return 1; }
    echo "setup: $(redis-server --version | cut -d' ' -f1-3), $(bwrap --version); ldd finds every library"
}

_warplab_setup
