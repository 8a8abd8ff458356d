#!/usr/bin/env bash
# PPO from the shipped `exit` network, KL-anchored to it, the rollout search in the opponent pool
# (issue #23, item 4), then duplicate matches against three heuristics and against three `exit`s.
# Resumable: run the same command again after an interruption (the PPO run continues from RUN/last.pt).
# Usage: bash research/ppo_from_exit/run.sh [RUN_DIR] [ITERATIONS]   (180 iterations: about 25 min of PPO,
#        then about 15 min of matches)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/ppo-exit}
ITERATIONS=${2:-180}
OUT=research/ppo_from_exit/results
mkdir -p "$OUT"
if [ -f "$RUN/last.pt" ]; then
  START=(--resume)
else
  START=(--init agents/checkpoints/exit.pt)
fi
python -m sichuan_env.train.policy.ppo --run "$RUN" "${START[@]}" --kl-ref agents/checkpoints/exit.pt \
  --logit-scale 10 --kl-coef 0.5 --lr 5e-5 --oracle-critic --value-warmup 10 --ent-coef 0.001 \
  --pool-frac 1.0 --pool-heuristic 0.5 --pool-agent search --pool-size 2 --snapshot-every 100 \
  --envs 256 --steps 32 --eval-every 100 --eval-walls 200 --iterations "$ITERATIONS" --minutes 600 --quiet
python -m sichuan_env.agents.eval --lineup "$RUN/last.pt" heuristic heuristic heuristic --walls 2500 --seed 0 \
  --quiet --json "$OUT/ppo_exit_vs_heuristic_seed0.json"
python -m sichuan_env.agents.eval --lineup "$RUN/last.pt" exit exit exit --walls 2500 --seed 4 \
  --quiet --json "$OUT/ppo_exit_vs_exit_seed4.json"
gzip -c "$RUN/metrics.jsonl" > "$OUT/metrics.jsonl.gz"
