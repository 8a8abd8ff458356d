#!/usr/bin/env bash
# The GPU figures of docs/performance.md, in one short run on a machine with a CUDA GPU.
#
# Such a machine may have torch and numba but no package registry: the pure-Python
# dependencies travel as wheels in .whl/ (download them where pip works, for the GPU
# machine's Python; see docs/performance.md, "Measuring on a GPU"). Results go to
# $OUT (default: benchmarks/results/gpu).
#
#     bash benchmarks/gpu.sh
set -uo pipefail
OUT=${OUT:-benchmarks/results/gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . || exit 1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
nproc
step() { echo "== $* ($(date +%T))"; "$@" 2>&1 | tee -a "$OUT/log.txt"; }
# PPO end to end: half the envs against three heuristics; then self-play at 4x the envs;
# then the split with the device synchronized around each part
step python3 -m benchmarks.train --device cuda --threads 16 --envs 4096 --steps 32 \
    --pool-frac 0.5 --budget 10 --no-inference --json "$OUT/train-4096-pool.json"
step python3 -m benchmarks.train --device cuda --threads 16 --envs 16384 --steps 32 \
    --budget 10 --no-inference --json "$OUT/train-16384-self.json"
step python3 -m benchmarks.train --device cuda --threads 16 --envs 4096 --steps 32 \
    --pool-frac 0.5 --budget 4 --no-inference --profile --json "$OUT/train-4096-profile.json"
# the whole-table value network's states per second
step python3 -m benchmarks.table_value --device cuda --threads 16 --walls 32 \
    --json "$OUT/table-value-cuda.json"
