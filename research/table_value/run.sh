#!/usr/bin/env bash
# The measurements of research/table_value/README.md, in order (about 25 min on 2 cores).
set -euo pipefail
R=research/table_value/results
# each case writes the file after --out (its last argument); a case already written is kept
m() { [ -f "${@: -1}" ] || python -m research.table_value.measure "$@"; }
m --agent distill --walls 2500 --seed 301 --fine-tune 2 --out $R/distill-2500.json
m --agent distill-guard --walls 2500 --seed 302 --out $R/distill-guard-2500.json
m --agent strongest --walls 1000 --seed 303 --out $R/strongest-1000.json
m --agent agents/checkpoints/ppo.pt --walls 1000 --seed 304 --fine-tune 2 --out $R/ppo-path-1000.json
m --agent random --walls 500 --seed 305 --out $R/random-500.json
m --agent defensive --walls 500 --seed 306 --out $R/defensive-500.json
for model in luck table_value; do
    python -m research.table_value.zscores $R/distill-2500.json $R/distill-guard-2500.json \
        --reference 0.052 0.015 --reference 0.078 0.015 --sets 50 --model $model --overwrite \
        --plot docs/img/zscores-$model.png --json $R/zscores-$model.json
done
