#!/usr/bin/env bash
# A round's network and its starting network on walls no screen or pick used: one seat against
# three heuristics, scored by the advantage sum, then paired wall by wall (research.exit.paired).
# Usage: bash research/oracle_labels/confirm.sh NEW_NET BASE_NET NAME [WALLS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/../.."
NEW=$1
BASE=$2
NAME=$3
WALLS=${4:-10000}
SEED=${5:-4404}
OUT=research/oracle_labels/results
mkdir -p "$OUT" runs/oracle-confirm
for pair in "new:$NEW" "base:$BASE"; do
    tag=${pair%%:*}
    net=${pair#*:}
    json="runs/oracle-confirm/$NAME-$tag-seed$SEED-w$WALLS.json"
    [ -f "$json" ] && continue
    rm -f "$json.tmp"
    /usr/bin/time -f "$tag: %e s" sichuan-eval --lineup "$net" heuristic heuristic heuristic \
        --walls "$WALLS" --seed "$SEED" --json "$json.tmp" --quiet --estimator advantage
    mv "$json.tmp" "$json"
done
python -m research.exit.paired "runs/oracle-confirm/$NAME-new-seed$SEED-w$WALLS.json" \
    "runs/oracle-confirm/$NAME-base-seed$SEED-w$WALLS.json" \
    --out "$OUT/confirm-$NAME-seed$SEED.json" --overwrite
