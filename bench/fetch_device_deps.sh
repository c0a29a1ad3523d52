#!/usr/bin/env bash
# Fetch what a device call carries: `.whl` (the web side's wheels for the device's Python 3.12) and
# `.deb` (Debian's redis-server and bubblewrap with their libraries). Both are git-ignored.
#
#     bench/fetch_device_deps.sh          # then run(..., carry=[".whl", ".deb"]) and source bench/device_setup.sh
#
# NumPy, Numba, numba-cuda, CuPy, Triton, PyTorch and the CUDA wheels are the device image's own and are left out, and so is
# kubernetes-validate (22 MB of schemas the fleet planner's export check reads), copydetect (with matplotlib and
# NumPy: the instructors' similarity page) and psycopg: no device run needs them, and the carry limit is 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .whl .deb && mkdir -p .whl .deb
grep -vE '^(#|$)|^(numpy|numba|numba-cuda|nvidia-|triton|kubernetes-validate|copydetect|psycopg)' requirements/base.txt > /tmp/warplab-device-reqs.txt
python3 -m pip download -q --dest .whl --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    --implementation cp -r /tmp/warplab-device-reqs.txt
# The softmax ladder's Helion rung (bench/softmax_ladder.py): Helion and what it imports that the image lacks; its
# packaging and markdown-it-py come with the web side's wheels, its scikit-learn (the autotuner's surrogate, 45 MB with
# SciPy) is optional and the ladder does not autotune. Triton and PyTorch are the image's. The CUTLASS DSL's wheels
# (92 MB) do not fit the carry: its rung says so.
python3 -m pip download -q --no-deps --dest .whl --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    --implementation cp helion==1.5.1 rich==15.0.0 pygments==2.21.0
python3 -m pip download -q --no-deps --only-binary=:all: --dest .whl "$(grep '^pytest-timeout==' requirements/test.txt)"  # the device's pytest is the image's
(cd .deb && apt-get download redis-server redis-tools liblzf1 libjemalloc2 libatomic1 bubblewrap libseccomp2)
echo "fetched $(ls .whl | wc -l) wheels ($(du -sh .whl | cut -f1)) and $(ls .deb | wc -l) Debian packages"
