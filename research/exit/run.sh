#!/usr/bin/env bash
# Expert iteration from the shipped `distill` network: ROUNDS rounds of labels -> fit -> evaluation,
# then the per-round picture. Resumable: run the same command again after an interruption.
# Usage: bash research/exit/run.sh [RUN_DIR] [ROUNDS]   (3 rounds: about 1 h 40 min on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${1:-runs/exit}
ROUNDS=${2:-3}
RESUME=()
[ -f "$RUN/exit.json" ] && RESUME=(--resume)
python -m sichuan_env.train.policy.exit --run "$RUN" --rounds "$ROUNDS" "${RESUME[@]}" --estimator luck | tee -a "$RUN.log"
python -m research.exit.plot "$RUN" --out docs/img/exit.png --json research/exit/results/summary.json
cp "$RUN/exit.json" research/exit/results/exit.json
