#!/usr/bin/env bash
# Each round's network on walls no screen or pick used (seed 4401): one seat against three
# heuristics, then each round minus the round before it, paired wall by wall
# (research.exit.paired; plain and luck-adjusted). The matches' JSON stay in RUN_DIR (per-wall
# samples, megabytes); the paired figures go to research/leaf_rounds/results/.
# Usage: bash research/leaf_rounds/confirm.sh [RUN_DIR] [ROUNDS] [WALLS] [SEED]
# R0 (round 0's network), OUT (the paired figures' folder) and ESTIMATOR (luck) may be set in the
# environment: research/advantage_rounds/confirm.sh does.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/exit-vl}
ROUNDS=${2:-3}
WALLS=${3:-20000}
SEED=${4:-4401}
OUT=${OUT:-research/leaf_rounds/results}
R0=${R0:-agents/checkpoints/distill.pt}
ESTIMATOR=${ESTIMATOR:-luck}
mkdir -p "$OUT"
net() { if [ "$1" = 0 ]; then echo "$R0"; else printf '%s/round-%02d/fit/distilled.pt' "$RUN" "$1"; fi; }
for k in $(seq 0 "$ROUNDS"); do
    json="$RUN/confirm-seed$SEED-r$k.json"
    [ -f "$json" ] && continue
    rm -f "$json.tmp"
    /usr/bin/time -f "round $k: %e s" sichuan-eval --lineup "$(net "$k")" heuristic heuristic heuristic \
        --walls "$WALLS" --seed "$SEED" --json "$json.tmp" --quiet --estimator "$ESTIMATOR"
    mv "$json.tmp" "$json"
done
for k in $(seq 1 "$ROUNDS"); do
    python -m research.exit.paired "$RUN/confirm-seed$SEED-r$k.json" \
        "$RUN/confirm-seed$SEED-r$((k - 1)).json" \
        --out "$OUT/confirm-seed$SEED-r$k-minus-r$((k - 1)).json" --overwrite
done
