#!/usr/bin/env bash
# Issue 30's GPU targets in one run on a lent GPU machine (the tool library's `device`
# entry): its python3 holds torch with CUDA, numpy, scipy and pytest, but not
# array-api-compat, which travels as a wheel. Here, once, in the repository root:
#
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: -d .whl array-api-compat==1.16.0
#
# then `run` this script with carry [".whl"] and a timeout of 600 s. It prints the
# numpy path on the machine's 16 cores beside the GPU at 10,000 x 30,000 (target: the
# GPU at least 50 times faster, same estimates), the GPU alone at 100,000 x 100,000
# (target: under 30 s on one H100/H200), runs the torch tests there, and last the graded
# model's numpy and GPU paths at 5,000 x 10,000 (no target; a look at the scored path).
set -euo pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/array_api_compat-*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 benchmarks/bench_scale.py --in-memory --sizes 10000x30000 --devices cpu,cuda
python3 benchmarks/bench_scale.py --in-memory --sizes 100000x100000 --devices cuda
python3 -m pytest -q -p no:cacheprovider tests/irt/test_devices.py \
    tests/irt/test_polytomous_devices.py tests/irt/test_polytomous_products.py
python3 benchmarks/bench_scale.py --in-memory --model graded --sizes 5000x10000 --devices cpu,cuda
