#!/usr/bin/env bash
# Each round's network on walls no screen or pick used (seed 4403): one seat against three
# heuristics, scored by the advantage-sum estimate, then each round minus the round before it,
# paired wall by wall (research.exit.paired). Round 0 is `exit-valueleaf`. The matches' JSON stay
# in RUN_DIR (per-wall samples); the paired figures go to research/advantage_rounds/results/.
# Usage: bash research/advantage_rounds/confirm.sh [RUN_DIR] [ROUNDS] [WALLS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/exit-adv}
ROUNDS=${2:-2}
WALLS=${3:-10000}
SEED=${4:-4403}
OUT=research/advantage_rounds/results
mkdir -p "$OUT"
net() { if [ "$1" = 0 ]; then echo agents/checkpoints/exit_valueleaf.pt; else printf '%s/round-%02d/fit/distilled.pt' "$RUN" "$1"; fi; }
for k in $(seq 0 "$ROUNDS"); do
    json="$RUN/confirm-seed$SEED-r$k.json"
    [ -f "$json" ] && continue
    rm -f "$json.tmp"
    /usr/bin/time -f "round $k: %e s" sichuan-eval --lineup "$(net "$k")" heuristic heuristic heuristic \
        --walls "$WALLS" --seed "$SEED" --json "$json.tmp" --quiet --estimator advantage
    mv "$json.tmp" "$json"
done
for k in $(seq 1 "$ROUNDS"); do
    python -m research.exit.paired "$RUN/confirm-seed$SEED-r$k.json" \
        "$RUN/confirm-seed$SEED-r$((k - 1)).json" \
        --out "$OUT/confirm-seed$SEED-r$k-minus-r$((k - 1)).json" --overwrite
done
if [ "$ROUNDS" -ge 2 ]; then
    python -m research.exit.paired "$RUN/confirm-seed$SEED-r$ROUNDS.json" "$RUN/confirm-seed$SEED-r0.json" \
        --out "$OUT/confirm-seed$SEED-r$ROUNDS-minus-r0.json" --overwrite
fi
