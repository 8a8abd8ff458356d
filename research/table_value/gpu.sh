#!/usr/bin/env bash
# The variance fit of the whole-table value (research/table_value/variance.py) on one GPU,
# then PPO throughput with GPU-sized minibatches (issue #42), in one short run.
#
# Needs the records of `python -m research.table_value.variance play` in runs/var-records
# (carried with the call) and the wheels of benchmarks/gpu.sh in .whl/. Results go to $OUT.
#
#     bash research/table_value/gpu.sh
set -uo pipefail
OUT=${OUT:-runs/gpu}
mkdir -p "$OUT/var"
export PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . || exit 1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
step() { echo "== $* ($(date +%T))"; "$@" 2>&1 | tee -a "$OUT/log.txt"; }
step timeout 330 python3 -m research.table_value.variance fit --records runs/var-records \
    --device cuda --threads 16 --chunk 128 --epochs 40 --minutes "${FIT_MINUTES:-4}" \
    --lr 1e-4 --out "$OUT/var/table_value.pt"
step timeout 100 python3 -m benchmarks.train --device cuda --threads 16 --envs 4096 --steps 32 \
    --pool-frac 0.5 --budget 5 --no-inference --minibatch 16384 \
    --json "$OUT/train-4096-pool-mb16k.json"
step timeout 100 python3 -m benchmarks.train --device cuda --threads 16 --envs 8192 --steps 32 \
    --pool-frac 0.5 --budget 5 --no-inference --minibatch 32768 \
    --json "$OUT/train-8192-pool-mb32k.json"
