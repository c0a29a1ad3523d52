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
# The softmax ladder's Helion rung (bench/softmax_ladder.py): Helion and what it imports that the image lacks. Its
# packaging and markdown-it-py come with the web side's wheels, and nothing that `import helion` or a call with a
# fixed config reaches imports its psutil, filecheck or scikit-learn (the autotuner's surrogate, 45 MB with SciPy;
# the ladder does not autotune). Triton 3.6.0 and PyTorch 2.11.0+cu130 are the image's.
# Helion 1.0.0 (2026-04-03) is the release made while PyTorch 2.11.0 (2026-03-23) was current; 1.5.1 (2026-10)
# imports `IntelGPUError` from torch._inductor, which 2.11 lacks (run 23). Checked without a GPU against those
# PyTorch and Triton wheels: 1.0.0 imports, every `from torch... import` in it resolves but two that only its
# torch.compile-fusion path uses, after checking for them, and the ladder's kernel generates Triton that compiles
# for sm_90. The CUTLASS DSL's wheels (92 MB) do not fit the carry: its rung says so.
python3 -m pip download -q --no-deps --dest .whl --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    --implementation cp helion==1.0.0 rich==15.0.0 pygments==2.21.0
python3 -m pip download -q --no-deps --only-binary=:all: --dest .whl "$(grep '^pytest-timeout==' requirements/test.txt)"  # the device's pytest is the image's
(cd .deb && apt-get download redis-server redis-tools liblzf1 libjemalloc2 libatomic1 bubblewrap libseccomp2)
echo "fetched $(ls .whl | wc -l) wheels ($(du -sh .whl | cut -f1)) and $(ls .deb | wc -l) Debian packages"
