#!/usr/bin/env bash
# Paired comparisons and a network reference (research/advantage_sum/README.md), after run.sh
# (about 15 minutes on the 2-core machine). Existing outputs are kept: rerunning resumes.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=research/advantage_sum/results
m() {  # agent walls seed [reference]
    local ref="${4:-heuristic}"
    local tag=""; [ "$ref" = heuristic ] || tag="-vs-$ref"
    local out="$R/$1$tag-$2-s$3.json"
    [ -e "$out" ] || python -m research.advantage_sum.measure --agent "$1" --reference "$ref" \
        --walls "$2" --seed "$3" --out "$out"
}
p() {  # first second out
    [ -e "$R/$3" ] || python -m research.advantage_sum.paired "$R/$1" "$R/$2" --out "$R/$3"
}
m exit-valueleaf 2500 911
p exit-valueleaf-2500-s911.json distill-2500-s911.json paired-exit-valueleaf-minus-distill-s911.json
m distill-guard 2500 912
p strongest-net-2500-s912.json distill-guard-2500-s912.json paired-strongest-net-minus-distill-guard-s912.json
m exit-valueleaf 1000 919 distill
