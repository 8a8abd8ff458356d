#!/usr/bin/env bash
# Each round's network on walls no screen or pick used (seed 4403): one seat against three
# heuristics, scored by the advantage-sum estimate, then each round minus the round before it and
# the last round minus round 0, paired wall by wall (research.exit.paired). Round 0 is
# `exit-valueleaf`. research/leaf_rounds/confirm.sh plays and pairs the rounds; the matches' JSON
# stay in RUN_DIR (per-wall samples); the paired figures go to research/advantage_rounds/results/.
# Usage: bash research/advantage_rounds/confirm.sh [RUN_DIR] [ROUNDS] [WALLS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/exit-adv}
ROUNDS=${2:-2}
WALLS=${3:-10000}
SEED=${4:-4403}
export OUT=research/advantage_rounds/results R0=agents/checkpoints/exit_valueleaf.pt ESTIMATOR=advantage
bash research/leaf_rounds/confirm.sh "$RUN" "$ROUNDS" "$WALLS" "$SEED"
if [ "$ROUNDS" -ge 2 ]; then
    python -m research.exit.paired "$RUN/confirm-seed$SEED-r$ROUNDS.json" "$RUN/confirm-seed$SEED-r0.json" \
        --out "$OUT/confirm-seed$SEED-r$ROUNDS-minus-r0.json" --overwrite
fi
