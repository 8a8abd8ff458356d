#!/usr/bin/env bash
# The advantage-sum measurements of research/advantage_sum/README.md, one after another
# (about 25 minutes on the 2-core machine). Existing outputs are kept: rerunning resumes.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=research/advantage_sum/results
m() {  # agent walls seed
    local out="$R/$1-$2-s$3.json"
    [ -e "$out" ] || python -m research.advantage_sum.measure --agent "$1" --walls "$2" --seed "$3" --out "$out"
}
m distill 2500 911
m strongest-net 2500 912
m strongest 1000 913
m random 1000 914
m defensive 1000 915
m distill 8000 917
# the large plain run the z-scores compare with (0.6 MB of per-wall samples: not committed)
mkdir -p runs/advantage-sum
[ -e runs/advantage-sum/plain-distill-20000-s918.json ] || sichuan-eval --lineup distill heuristic \
    heuristic heuristic --walls 20000 --seed 918 --no-adjust --quiet \
    --json runs/advantage-sum/plain-distill-20000-s918.json
[ -e "$R/zscores-distill.json" ] || python -m research.advantage_sum.zscores "$R/distill-8000-s917.json" \
    --reference runs/advantage-sum/plain-distill-20000-s918.json --sets 40 --out "$R/zscores-distill.json"
m search 400 916
