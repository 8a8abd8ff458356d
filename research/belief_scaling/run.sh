#!/usr/bin/env bash
# Belief-network learning curve: the same recipe on 1.5k, 3k, 6k and 12k hands of heuristic self-play,
# each run 8 minutes (best network by validation loss), scored on the same 600 held-out hands.
# Usage: bash research/belief_scaling/run.sh DATA_DIR [RUNS_DIR]   (about 45 min on one core; resumable: finished steps are skipped)
set -euo pipefail
D=${1:?usage: bash research/belief_scaling/run.sh DATA_DIR [RUNS_DIR]}
R=${2:-runs/scaling}
cd "$(dirname "$0")/../.."
OUT=research/belief_scaling/results
mkdir -p "$R"
for spec in 1500:31 3000:32 6000:33; do
  n=${spec%%:*}; s=${spec##*:}
  [ -f "$D/heur-$n/dataset.json" ] || python -m sichuan_env.train.data.make_dataset --hands "$n" --obs-version 2 --seed "$s" \
      --out "$D/heur-$n" --quiet
done
[ -f "$D/heur-test/dataset.json" ] || python -m sichuan_env.train.data.make_dataset --hands 600 --obs-version 2 --seed 2 \
    --out "$D/heur-test" --quiet
[ -f "$D/heur-train11/dataset.json" ] || python -m sichuan_env.train.data.make_dataset --hands 12000 --obs-version 2 --seed 11 \
    --out "$D/heur-train11" --quiet
for n in 1500 3000 6000 12000; do
  data="$D/heur-$n"; [ "$n" = 12000 ] && data="$D/heur-train11"
  if [ ! -f "$OUT/report-$n.json" ]; then
    resume=""; [ -f "$R/$n/state.pt" ] && resume="--resume"
    python -m sichuan_env.train.belief.train --data "$data" --run "$R/$n" --epochs 40 --minutes 8 --val-rows 20000 \
        --eval-every 200 --dropout 0.2 --tenpai-pool --weight-decay 0.01 --threads 1 --seed 0 --quiet $resume
    python -m sichuan_env.train.belief.report "$R/$n/best.pt" --data "$D/heur-test" --threads 1 --json "$OUT/report-$n.json"
  fi
done
