#!/usr/bin/env bash
# The variance refit of the whole-table value (sichuan_env.train.table_value.variance) on a GPU,
# then PPO throughput with GPU-sized minibatches (issue #42), in one short run.
#
# Needs a data folder with game records in runs/var-data (carried with the call), made by
#     python -m sichuan_env.train.table_value.data --out runs/var-data --hands 24576 \
#         --block-walls 64 --seed 1234 --records --workers 2
# and the wheels of benchmarks/gpu.sh in .whl/. Results go to $OUT.
#
#     bash research/table_value/gpu.sh
set -uo pipefail
OUT=${OUT:-runs/gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . || exit 1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
step() { echo "== $* ($(date +%T))"; "$@" 2>&1 | tee -a "$OUT/log.txt"; }
step timeout 330 python3 -m sichuan_env.train.table_value.variance --data runs/var-data \
    --device cuda --threads 16 --objective wall --epochs 8 --lr 6e-4 --no-progress \
    --out "$OUT/var"
step timeout 100 python3 -m benchmarks.train --device cuda --threads 16 --envs 4096 --steps 32 \
    --pool-frac 0.5 --budget 5 --no-inference --minibatch 16384 \
    --json "$OUT/train-4096-pool-mb16k.json"
step timeout 100 python3 -m benchmarks.train --device cuda --threads 16 --envs 8192 --steps 32 \
    --pool-frac 0.5 --budget 5 --no-inference --minibatch 32768 \
    --json "$OUT/train-8192-pool-mb32k.json"
