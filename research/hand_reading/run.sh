#!/usr/bin/env bash
# The SMC hand reader on held-out heuristic self-play, its blend with the shipped belief network,
# and the report (README "A hand reader by sequential Monte Carlo"). Resumable: rerun to continue.
#   bash research/hand_reading/run.sh DATA_DIR   # datasets made or reused under DATA_DIR, predictions in results/
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=${1:?usage: bash research/hand_reading/run.sh DATA_DIR}
OUT=research/hand_reading/results
[ -d "$DATA/heur-test" ] || python -m sichuan_env.train.data.make_dataset --hands 600 --obs-version 2 --seed 2 --out "$DATA/heur-test"
[ -d "$DATA/heur-val" ] || python -m sichuan_env.train.data.make_dataset --hands 200 --obs-version 2 --seed 5 --out "$DATA/heur-val"
SMC=(--method smc --particles 64 --runs 4 --moves 4 --collapse 2 --restarts 2 --resume)
# the blend's fitting hands, and the first 300 held-out hands in three parts (two at a time on two cores)
python -m research.hand_reading.filter_eval "${SMC[@]}" --data "$DATA/heur-val" --games 100 --save "$OUT/val-0-100.npz" & p1=$!
python -m research.hand_reading.filter_eval "${SMC[@]}" --data "$DATA/heur-test" --games 100 --save "$OUT/test-0-100.npz"
wait "$p1"
python -m research.hand_reading.filter_eval "${SMC[@]}" --data "$DATA/heur-test" --first-game 100 --games 200 --save "$OUT/test-100-200.npz" & p2=$!
python -m research.hand_reading.filter_eval "${SMC[@]}" --data "$DATA/heur-test" --first-game 200 --games 300 --save "$OUT/test-200-300.npz"
wait "$p2"
python -m research.hand_reading.blend belief --data "$DATA/heur-val" --games 100 --filter-cache "$OUT/val-0-100.npz" \
    --out "$OUT/belief_blend.json" --threads 1
# the library report scores the model, the baselines and the reader's files; this one adds the blend
python -m research.hand_reading.report belief --data "$DATA/heur-test" --games 300 --threads 1 \
    --filter-cache "$OUT"/test-0-100.npz "$OUT"/test-100-200.npz "$OUT"/test-200-300.npz \
    --blend "$OUT/belief_blend.json" --compare model+filter model --json "$OUT/belief_smc_report.json"
