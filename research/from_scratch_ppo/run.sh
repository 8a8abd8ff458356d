#!/usr/bin/env bash
# PPO from a random network against three heuristics on the batched Gymnasium env, then the curve.
# Usage: bash research/from_scratch_ppo/run.sh [RUN_DIR] [STEPS]   (STEPS 19660800: ~19 min on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/cleanrl}
STEPS=${2:-19660800}
mkdir -p "$RUN"
[ -f "$RUN/metrics.jsonl" ] && { echo "$RUN/metrics.jsonl exists: pass a new RUN_DIR" >&2; exit 2; }
python examples/cleanrl_ppo.py --num-envs 256 --num-steps 64 --total-timesteps "$STEPS" \
    --eval-hands 1024 --metrics "$RUN/metrics.jsonl" | tee "$RUN/log.txt"
python -m research.from_scratch_ppo.plot "$RUN/metrics.jsonl" \
    --out research/from_scratch_ppo/results/curve.png --json research/from_scratch_ppo/results/summary.json
