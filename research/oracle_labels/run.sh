#!/usr/bin/env bash
# One round of expert iteration whose labels are rollouts from the true state (every hand as it
# is, only the undrawn wall reshuffled: `exit --oracle`), from `distill`, the driver's defaults
# otherwise (16 rollouts, 35% of own turns and claim answers, heuristic rollouts), screened by the
# advantage sum (issue #40). Resumable: run the same command again after an interruption.
# Usage: bash research/oracle_labels/run.sh [RUN_DIR] [ROUNDS] [extra exit flags...]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/exit-oracle}
ROUNDS=${2:-1}
shift $(( $# < 2 ? $# : 2 ))
RESUME=()
[ -f "$RUN/exit.json" ] && RESUME=(--resume)
python -m sichuan_env.train.policy.exit --run "$RUN" --rounds "$ROUNDS" "${RESUME[@]}" \
    --oracle --seed 44 "$@" | tee -a "$RUN.log"
cp "$RUN/exit.json" "research/oracle_labels/results/$(basename "$RUN").json"
