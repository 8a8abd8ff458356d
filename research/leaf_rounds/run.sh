#!/usr/bin/env bash
# Policy-improvement rounds on the value-leaf search (issue #40): each round labels the after-win
# own turns the current network plays with the value-leaf search (8 determinizations, the next
# draw, then V), fits the next network to softmax(action values), evaluates it, and refits V on
# its play. Round 0: `distill` and the library's variance-refitted V (research/table_value).
# Resumable: run the same command again after an interruption.
# Usage: bash research/leaf_rounds/run.sh [RUN_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/exit-vl}
ROUNDS=${2:-3}
V0=${V0:-runs/var-hand/table_value.pt}
RESUME=()
[ -f "$RUN/exit.json" ] && RESUME=(--resume)
python -m sichuan_env.train.policy.exit --run "$RUN" --rounds "$ROUNDS" "${RESUME[@]}" \
    --search value-leaf --no-claims --samples 8 --p-label 1 --after-win \
    --anchor-before-win 300000 --objective softmax --value-model "$V0" --hands 8192 \
    --value-hands 4096 --seed 41 --estimator luck | tee -a "$RUN.log"
python -m research.exit.plot "$RUN" --out research/leaf_rounds/results/rounds.png \
    --json research/leaf_rounds/results/summary.json
cp "$RUN/exit.json" research/leaf_rounds/results/exit.json
