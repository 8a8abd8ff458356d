#!/usr/bin/env bash
# Rounds of value-leaf expert iteration from `exit-valueleaf`, with the advantage-sum estimate
# choosing each round's margin and scoring the driver's matches (issue #40): the recipe of
# research/leaf_rounds otherwise, from its shipped round-3 network. Resumable: run the same
# command again after an interruption.
# Usage: bash research/advantage_rounds/run.sh [RUN_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/exit-adv}
ROUNDS=${2:-2}
V0=${V0:-runs/var-hand/table_value.pt}
RESUME=()
[ -f "$RUN/exit.json" ] && RESUME=(--resume)
python -m sichuan_env.train.policy.exit --run "$RUN" --rounds "$ROUNDS" "${RESUME[@]}" \
    --init exit_valueleaf --search value-leaf --no-claims --samples 8 --p-label 1 --after-win \
    --anchor-before-win 300000 --objective softmax --value-model "$V0" --hands 8192 \
    --value-hands 4096 --seed 43 --estimator advantage | tee -a "$RUN.log"
python -m research.exit.plot "$RUN" --out research/advantage_rounds/results/rounds.png \
    --json research/advantage_rounds/results/summary.json
cp "$RUN/exit.json" research/advantage_rounds/results/exit.json
